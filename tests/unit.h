/* Running a CUnit suite the same way in every unit test: silent on success,
 * failures listed on stderr, exit status 1 when anything failed. */
#ifndef COOP_TEST_UNIT_H
#define COOP_TEST_UNIT_H

#include <CUnit/Basic.h>
#include <mpi.h>
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

/* The suite `suite_name` of the tests in the array `table`. */
#define COOP_UNIT_RUN(suite_name, table) coop_unit_run(suite_name, table, sizeof(table) / sizeof *(table))

/* A whole MPI test program: body() runs the program's suites on every rank
 * between MPI_Init and MPI_Finalize; the exit status is the largest status
 * body() returned on any rank. */
static inline int coop_unit_mpi_main(int argc, char **argv, int (*body)(void)) {
  MPI_Init(&argc, &argv);
  int rc = body();
  MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return rc;
}

/* main() of a test program of one suite, the tests listed as the macro's
 * arguments ({"name", function} each); COOP_UNIT_MPI_MAIN runs it on every
 * rank of an MPI job. */
#define COOP_UNIT_MAIN(suite_name, ...)                \
  static int coop_unit_suite(void) {                   \
    static const coop_unit_test tests[] = {__VA_ARGS__}; \
    return COOP_UNIT_RUN(suite_name, tests);           \
  }                                                    \
  int main(void) { return coop_unit_suite(); }

#define COOP_UNIT_MPI_MAIN(suite_name, ...)              \
  static int coop_unit_suite(void) {                     \
    static const coop_unit_test tests[] = {__VA_ARGS__}; \
    return COOP_UNIT_RUN(suite_name, tests);             \
  }                                                      \
  int main(int argc, char **argv) { return coop_unit_mpi_main(argc, argv, coop_unit_suite); }

#endif
