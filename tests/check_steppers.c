/* placeholder replaced below */
#include "tests.h"
Suite *steppers_suite(void) { return suite_create("steppers"); }
