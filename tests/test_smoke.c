/* SPDX-License-Identifier: MIT */
#include "testutil.h"
static void t_version(void **state)
{
  (void)state;
  assert_string_equal(pp_version(), "0.1.0");
}
int main(void)
{
  const struct CMUnitTest tests[] = {cmocka_unit_test(t_version)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
