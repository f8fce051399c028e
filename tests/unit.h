/* Running a CUnit suite the same way in every unit test: silent on success,
 * failures listed on stderr, exit status 1 when anything failed. */
#ifndef COOP_TEST_UNIT_H
#define COOP_TEST_UNIT_H

#include <CUnit/Basic.h>
#include <stdio.h>

typedef struct {
  const char *name;
  void (*fn)(void);
} coop_unit_test;

static inline int coop_unit_run(const char *suite_name, const coop_unit_test *tests, size_t n) {
  CU_pSuite suite;
  unsigned failures;
  if (CU_initialize_registry() != CUE_SUCCESS) return 1;
  suite = CU_add_suite(suite_name, NULL, NULL);
  for (size_t i = 0; suite && i < n; i++)
    if (!CU_add_test(suite, tests[i].name, tests[i].fn)) suite = NULL;
  if (!suite) {
    CU_cleanup_registry();
    return 1;
  }
  CU_run_all_tests(); /* the core runner prints nothing */
  failures = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
  if (failures) {
    CU_basic_show_failures(CU_get_failure_list());
    fprintf(stderr, "\n%s: %u failed assertions in %u tests\n", suite_name,
            CU_get_number_of_failures(), CU_get_number_of_tests_failed());
  }
  CU_cleanup_registry();
  return failures ? 1 : 0;
}

#endif
