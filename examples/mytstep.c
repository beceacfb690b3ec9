/* mytstep: the tstep program with your own steppers and systems compiled in
 * (docs/students.md).  Every command of tstep, with ralston and pendulum
 * among the built-in types:
 *   cc mytstep.c ralston.c pendulum.c $(pkg-config --cflags tstep) \
 *      $(pkg-config --static --libs tstep-ext | sed 's/-ltstep\([-a-z]*\)/-l:libtstep\1.a/g') \
 *      -o mytstep
 * (libtstep-ext.a and libtstep.a: the core and its extension, every feature)
 *   ./mytstep list */
#include <tstep/tstep.h>

int main(int argc, char **argv)
{
    /* The arrays the plugin files define; either may be left out (NULL). */
    return tstep_main(argc, argv, tstep_plugin_steppers, tstep_plugin_systems);
}
