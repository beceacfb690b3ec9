/* placeholder replaced below */
#include "tests.h"
Suite *cli_suite(void) { return suite_create("cli"); }
