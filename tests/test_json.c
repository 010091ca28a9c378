/* SPDX-License-Identifier: MIT */
/*
** The JSON access layer of the readers (src/format/json.c) on its own:
** what every model, cluster and plan reader relies on for its messages.
**
** - parsing: an object parses; an array, a duplicate key, a NUL inside
**   a string and a syntax error fail with PP_EPARSE at file:line:col;
** - the getters: a required field that is missing (or null) is named
**   with its object; an optional one takes its default; wrong types
**   name the type found; ranges give PP_EINPUT below (a negative value
**   called negative) and PP_ELIMIT above; integers accept integral
**   reals only, none past int64 (2^63 written as a real included);
**   strings longer than PP_MAX_NAME are refused; array elements must
**   be objects.
*/
#include "testutil.h"

#include "format/json.h"

#include <stdlib.h>
#include <string.h>

static json_t *parse(pp_ctx *ctx, const char *text)
{
  json_t *j = ppi_json_parse(ctx, text, strlen(text), "t.json");
  if (!j)
    fail_msg("parse: %s", pp_ctx_errmsg(ctx));
  return j;
}

static void bad_parse(pp_ctx *ctx, const char *text, const char *where,
                      const char *what)
{
  assert_null(ppi_json_parse(ctx, text, strlen(text), "t.json"));
  tu_expect_error(ctx, pp_ctx_errcode(ctx), PP_EPARSE, where, what, NULL);
}

static void t_parse(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  json_t *j = parse(ctx, "{\"a\": [1, 2.5, \"x\", true, null, {}]}");
  json_t *a = json_object_get(j, "a");
  static const char *const types[] = {"an integer", "a number", "a string",
                                      "a boolean",  "null",     "an object"};
  size_t i;
  for (i = 0; i < 6; i++)
    assert_string_equal(ppi_json_type(json_array_get(a, i)), types[i]);
  assert_string_equal(ppi_json_type(a), "an array");
  json_decref(j);
  bad_parse(ctx, "[1, 2]", "t.json:1:1",
            "the document must be a JSON object, not an array");
  /* jansson refuses a scalar document itself */
  bad_parse(ctx, "\"text\"", "t.json:1:", "malformed JSON");
  bad_parse(ctx, "{\"a\": 1, \"a\": 2}", "t.json:1:", "malformed JSON");
  bad_parse(ctx, "{\"a\": \"x\\u0000y\"}", "t.json:1:", "malformed JSON");
  bad_parse(ctx, "{\n  \"a\": 1,\n  \"b\": ]\n}",
            "t.json:3:", "malformed JSON");
  bad_parse(ctx, "", "t.json:1", "malformed JSON");
}

/* A getter call that fails: the key, its range, the status and the
** message (after "t.json"). */
struct bad {
  const char *key;
  double lo, hi;
  pp_status rc;
  const char *msg;
};

static void t_numbers(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  json_t *j = parse(ctx, "{\"i\": 3, \"r\": 0.5, \"neg\": -1, \"s\": \"3\","
                         " \"n\": null, \"big\": 1e300}");
  static const struct bad bad[] = {
      /* required, and absent or null */
      {"zz", 0, 1, PP_EINPUT, "op 'a': missing field \"zz\""},
      {"n", 0, 1, PP_EINPUT, "op 'a': missing field \"n\""},
      /* types and ranges */
      {"s", 0, 9, PP_EINPUT, "op 'a': \"s\" must be a number, not a string"},
      {"neg", 0, 9, PP_EINPUT, "op 'a': \"neg\" is negative (-1)"},
      {"r", 1, 9, PP_EINPUT, "op 'a': \"r\" must be at least 1, not 0.5"},
      {"i", 0, 2, PP_ELIMIT, "op 'a': \"i\" must be at most 2, not 3"},
      {"big", 0, 1e18, PP_ELIMIT, "op 'a': \"big\" must be at most"},
  };
  double x = -7;
  size_t i;
  /* integers and reals are numbers */
  assert_int_equal(
      ppi_jnum(ctx, "t.json", "op 'a'", j, "i", true, 0, 0, 10, &x), PP_OK);
  assert_true(x == 3);
  assert_int_equal(
      ppi_jnum(ctx, "t.json", "op 'a'", j, "r", true, 0, 0, 10, &x), PP_OK);
  assert_true(x == 0.5);
  /* absent or null: the default, unless required */
  assert_int_equal(
      ppi_jnum(ctx, "t.json", "op 'a'", j, "zz", false, 42, 0, 1, &x), PP_OK);
  assert_true(x == 42);
  assert_int_equal(
      ppi_jnum(ctx, "t.json", "op 'a'", j, "n", false, 7, 0, 1, &x), PP_OK);
  assert_true(x == 7);
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
    tu_expect_error(ctx,
                    ppi_jnum(ctx, "t.json", "op 'a'", j, bad[i].key, true, 0,
                             bad[i].lo, bad[i].hi, &x),
                    bad[i].rc, "t.json", bad[i].msg, NULL);
  assert_true(x == 7); /* untouched on error */
  /* a bare value */
  assert_int_equal(
      ppi_jval_num(ctx, "t.json", "size", json_object_get(j, "r"), 0, 1, &x),
      PP_OK);
  assert_true(x == 0.5);
  tu_expect_error(
      ctx,
      ppi_jval_num(ctx, "t.json", "size", json_object_get(j, "s"), 0, 1, &x),
      PP_EINPUT, "size must be a number, not a string", NULL);
  assert_true(x == 0.5);
  json_decref(j);
}

static void t_integers(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  json_t *j = parse(ctx, "{\"i\": 3, \"r\": 4.0, \"half\": 4.5, \"neg\": -3,"
                         " \"s\": \"x\", \"huge\": 1e19, \"neg_r\": -2.0,"
                         " \"edge\": 9223372036854775808.0}");
  static const struct bad bad[] = {
      {"zz", 0, 9, PP_EINPUT, "w: missing field \"zz\""},
      {"half", 0, 9, PP_EINPUT, "w: \"half\" must be an integer, not 4.5"},
      {"s", 0, 9, PP_EINPUT, "w: \"s\" must be an integer, not a string"},
      {"neg", 0, 9, PP_EINPUT, "w: \"neg\" is negative (-3)"},
      {"i", 5, 9, PP_EINPUT, "w: \"i\" must be at least 5, not 3"},
      {"i", 0, 2, PP_ELIMIT, "w: \"i\" must be at most 2, not 3"},
      {"neg_r", 0, 9, PP_EINPUT, "w: \"neg_r\" must be at least 0, not -2"},
      /* past int64 as a real: a limit, not an overflow; 2^63 equals
      ** (double)INT64_MAX, but no int64 holds it */
      {"huge", 0, -1, PP_ELIMIT, "w: \"huge\" must be at most"},
      {"edge", 0, -1, PP_ELIMIT, "w: \"edge\" must be at most"},
  };
  int64_t v = -7;
  size_t i;
  assert_int_equal(ppi_jint(ctx, "t.json", "w", j, "i", true, 0, 0, 9, &v),
                   PP_OK);
  assert_int_equal(v, 3);
  /* an integral real is an integer */
  assert_int_equal(ppi_jint(ctx, "t.json", "w", j, "r", true, 0, 0, 9, &v),
                   PP_OK);
  assert_int_equal(v, 4);
  assert_int_equal(ppi_jint(ctx, "t.json", "w", j, "zz", false, 11, 0, 9, &v),
                   PP_OK);
  assert_int_equal(v, 11);
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
    tu_expect_error(
        ctx,
        ppi_jint(ctx, "t.json", "w", j, bad[i].key, true, 0, (int64_t)bad[i].lo,
                 bad[i].hi < 0 ? INT64_MAX : (int64_t)bad[i].hi, &v),
        bad[i].rc, "t.json", bad[i].msg, NULL);
  assert_int_equal(v, 11); /* untouched on error */
  json_decref(j);
}

static void t_strings_arrays(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  char *text = malloc(PP_MAX_NAME + 64), *p;
  json_t *j, *arr = NULL, *o = NULL;
  const char *str = "unset";
  assert_non_null(text);
  p = text + sprintf(text, "{\"name\": \"a\", \"n\": 1, \"ops\": [{}, 2],"
                           " \"long\": \"");
  memset(p, 'x', PP_MAX_NAME + 1);
  strcpy(p + PP_MAX_NAME + 1, "\"}");
  j = parse(ctx, text);
  free(text);
  assert_int_equal(ppi_jstr(ctx, "t.json", "w", j, "name", true, &str), PP_OK);
  assert_string_equal(str, "a");
  assert_int_equal(ppi_jstr(ctx, "t.json", "w", j, "zz", false, &str), PP_OK);
  assert_null(str);
  tu_expect_error(ctx, ppi_jstr(ctx, "t.json", "w", j, "zz", true, &str),
                  PP_EINPUT, "w: missing field \"zz\"", NULL);
  tu_expect_error(ctx, ppi_jstr(ctx, "t.json", "w", j, "n", true, &str),
                  PP_EINPUT, "w: \"n\" must be a string, not an integer", NULL);
  str = "unset"; /* a failed getter leaves no stale result behind */
  tu_expect_error(ctx, ppi_jstr(ctx, "t.json", "w", j, "long", true, &str),
                  PP_ELIMIT, "w: \"long\" is longer than 4096 bytes", NULL);
  assert_null(str);

  assert_int_equal(ppi_jarr(ctx, "t.json", "w", j, "ops", true, &arr), PP_OK);
  assert_int_equal(json_array_size(arr), 2);
  assert_int_equal(ppi_jarr(ctx, "t.json", "w", j, "zz", false, &arr), PP_OK);
  assert_null(arr);
  tu_expect_error(ctx, ppi_jarr(ctx, "t.json", "w", j, "zz", true, &arr),
                  PP_EINPUT, "w: missing field \"zz\"", NULL);
  arr = j;
  tu_expect_error(ctx, ppi_jarr(ctx, "t.json", "w", j, "name", true, &arr),
                  PP_EINPUT, "w: \"name\" must be an array, not a string",
                  NULL);
  assert_null(arr);
  arr = json_object_get(j, "ops");
  assert_int_equal(ppi_jobj_at(ctx, "t.json", "operator", arr, 0, &o), PP_OK);
  assert_true(json_is_object(o));
  tu_expect_error(ctx, ppi_jobj_at(ctx, "t.json", "operator", arr, 1, &o),
                  PP_EINPUT, "operator 1 must be an object, not an integer",
                  NULL);
  assert_null(o);
  json_decref(j);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      TU_CTX_TEST(t_parse),
      TU_CTX_TEST(t_numbers),
      TU_CTX_TEST(t_integers),
      TU_CTX_TEST(t_strings_arrays),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
