/* placeholder replaced below */
#include "tests.h"
Suite *systems_suite(void) { return suite_create("systems"); }
