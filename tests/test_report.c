/* SPDX-License-Identifier: MIT */
/*
** The plan report and the cairo Gantt chart: contents, determinism,
** errors, the command, and the page rendered in headless Chromium with
** no console message (a control page proves that console errors are
** seen), plus a screenshot.
*/
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

struct fixture {
  pp_ctx *ctx;
  pp_model *m;
  pp_cluster *c;
  pp_plan *p;
};

static void load(struct fixture *f)
{
  assert_int_equal(pp_ctx_create(NULL, &f->ctx), PP_OK);
  assert_int_equal(pp_model_load(f->ctx, "gpt2-amp", &f->m), PP_OK);
  assert_int_equal(pp_cluster_load(f->ctx, "amp-het-cluster", &f->c), PP_OK);
  if (pp_plan_load(f->ctx, tu_path("examples/plan-gpt2-amp.json"), f->m, f->c,
                   &f->p))
    fail_msg("%s", pp_ctx_errmsg(f->ctx));
}

static void unload(struct fixture *f)
{
  pp_plan_destroy(f->p);
  pp_cluster_destroy(f->c);
  pp_model_destroy(f->m);
  pp_ctx_destroy(f->ctx);
}

static char *report_text(struct fixture *f, int baselines, const char *name)
{
  pp_report_params rp;
  char path[600];
  char *t;
  pp_report_params_init(&rp);
  rp.baselines = baselines;
  rp.time_limit_s = 5;
  snprintf(path, sizeof path, "%s", tu_tmp(name));
  if (pp_report_write(f->ctx, f->p, f->m, f->c, NULL, &rp, path, NULL))
    fail_msg("%s", pp_ctx_errmsg(f->ctx));
  t = tu_slurp(path, NULL);
  assert_non_null(t);
  return t;
}

static void t_contents(void **state)
{
  struct fixture f;
  char *a, *b;
  int32_t d;
  (void)state;
  load(&f);
  a = report_text(&f, 1, "r1.html");
  assert_true(strncmp(a, "<!DOCTYPE html>", 15) == 0);
  assert_non_null(strstr(a, "</html>\n"));
  /* every part the issue asks for */
  assert_non_null(strstr(a, "id=\"topology\""));
  assert_non_null(strstr(a, "id=\"gantt\""));
  assert_non_null(strstr(a, "data:image/svg+xml;base64,"));
  assert_non_null(strstr(a, "id=\"memory\""));
  assert_non_null(strstr(a, "id=\"time\""));
  assert_non_null(strstr(a, "id=\"baselines\""));
  assert_non_null(strstr(a, ">megatron<"));
  assert_non_null(strstr(a, ">pipedream<"));
  assert_non_null(strstr(a, ">lower bound<"));
  /* self-contained: nothing fetched from elsewhere */
  assert_null(strstr(a, "src=\"http"));
  assert_null(strstr(a, "href=\"http"));
  assert_null(strstr(a, "<link"));
  /* every used device is drawn with its stage */
  for (d = 0; d < pp_cluster_ndev(f.c); d++) {
    pp_device_desc dd;
    char key[128];
    pp_cluster_device(f.c, d, &dd);
    snprintf(key, sizeof key, "<title>%s (", dd.name);
    if (!strstr(a, key))
      fail_msg("device %s missing from the topology", dd.name);
  }
  /* the figures: the simulated time as the simulator gives it */
  {
    pp_sim *s;
    pp_sim_summary ss;
    char key[64];
    assert_int_equal(pp_simulate(f.ctx, f.p, f.m, f.c, NULL, &s), PP_OK);
    pp_sim_get_summary(s, &ss);
    snprintf(key, sizeof key, "<b>%.3f ms</b>", ss.iteration_ms);
    assert_non_null(strstr(a, key));
    pp_sim_destroy(s);
  }
  /* the same inputs give the same bytes */
  b = report_text(&f, 1, "r2.html");
  assert_string_equal(a, b);
  free(b);
  b = report_text(&f, 0, "r3.html");
  assert_non_null(strstr(b, "baselines off"));
  assert_null(strstr(b, ">megatron<"));
  free(b);
  free(a);
  unload(&f);
}

static void t_errors(void **state)
{
  struct fixture f;
  pp_cost_params cp;
  pp_cluster *small;
  pp_sim *s;
  char path[600];
  (void)state;
  load(&f);
  tu_expect_error(f.ctx,
                  pp_report_write(f.ctx, NULL, f.m, f.c, NULL, NULL, "x", NULL),
                  PP_EINVAL, "NULL", NULL);
  pp_ctx_clear_error(f.ctx);
  pp_cost_params_init(&cp);
  cp.kind = PP_COST_AMP;
  tu_expect_error(f.ctx,
                  pp_report_write(f.ctx, f.p, f.m, f.c, &cp, NULL, "x", NULL),
                  PP_EINVAL, "AMP", NULL);
  /* a plan that does not fit the cluster: the checker's message, no file */
  pp_ctx_clear_error(f.ctx);
  assert_int_equal(pp_cluster_load(f.ctx, "hier:1x4", &small), PP_OK);
  snprintf(path, sizeof path, "%s", tu_tmp("never.html"));
  assert_int_not_equal(
      pp_report_write(f.ctx, f.p, f.m, small, NULL, NULL, path, NULL), PP_OK);
  assert_true(pp_ctx_errmsg(f.ctx)[0] != '\0');
  assert_null(tu_slurp(path, NULL));
  pp_cluster_destroy(small);
  /* a directory that does not exist: an error naming it */
  pp_ctx_clear_error(f.ctx);
  assert_int_equal(pp_report_write(f.ctx, f.p, f.m, f.c, NULL, NULL,
                                   "/nonexistent-dir/r.html", NULL),
                   PP_EIO);
  assert_non_null(strstr(pp_ctx_errmsg(f.ctx), "/nonexistent-dir/r.html"));
  /* a Gantt chart needs recorded events */
  pp_ctx_clear_error(f.ctx);
  pp_cost_params_init(&cp);
  cp.record = 0;
  assert_int_equal(pp_simulate(f.ctx, f.p, f.m, f.c, &cp, &s), PP_OK);
  tu_expect_error(f.ctx,
                  pp_gantt_write(f.ctx, s, f.c, PP_IMAGE_SVG, NULL, stdout),
                  PP_EINVAL, "record", NULL);
  pp_sim_destroy(s);
  unload(&f);
}

static void t_gantt(void **state)
{
  struct fixture f;
  pp_sim *s;
  char svg[600], png[600], *t;
  size_t len;
  static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', 13, 10, 26, 10};
  (void)state;
  load(&f);
  assert_int_equal(pp_simulate(f.ctx, f.p, f.m, f.c, NULL, &s), PP_OK);
  snprintf(svg, sizeof svg, "%s", tu_tmp("g.svg"));
  snprintf(png, sizeof png, "%s", tu_tmp("g.png"));
  assert_int_equal(pp_gantt_write(f.ctx, s, f.c, PP_IMAGE_SVG, svg, NULL),
                   PP_OK);
  assert_int_equal(pp_gantt_write(f.ctx, s, f.c, PP_IMAGE_PNG, png, NULL),
                   PP_OK);
  t = tu_slurp(svg, &len);
  assert_non_null(t);
  assert_non_null(strstr(t, "<svg"));
  assert_non_null(strstr(t, "</svg>"));
  free(t);
  t = tu_slurp(png, &len);
  assert_non_null(t);
  assert_true(len > 10000);
  assert_memory_equal(t, sig, 8);
  free(t);
  pp_sim_destroy(s);
  unload(&f);
}

static void t_cli(void **state)
{
  char cmd[2048], *out, *err, html[600], img[600];
  (void)state;
  snprintf(html, sizeof html, "%s", tu_tmp("cli.html"));
  snprintf(img, sizeof img, "%s", tu_tmp("cli.png"));
  snprintf(cmd, sizeof cmd,
           "report %s --model gpt2-amp --cluster amp-het-cluster -o %s "
           "--gantt-image %s --time-limit 5",
           tu_path("examples/plan-gpt2-amp.json"), html, img);
  if (tu_run(cmd, &out, &err) != 0)
    fail_msg("%s%s", out, err);
  assert_non_null(strstr(out, "wrote"));
  snprintf(cmd, sizeof cmd,
           "report %s --model gpt2-amp --cluster amp-het-cluster",
           tu_path("examples/plan-gpt2-amp.json"));
  assert_int_equal(tu_run(cmd, &out, &err), 1);
  assert_non_null(strstr(err, "-o"));
  snprintf(cmd, sizeof cmd,
           "simulate %s --model gpt2-amp --cluster amp-het-cluster --gantt 0 "
           "--gantt-image %s",
           tu_path("examples/plan-gpt2-amp.json"), tu_tmp("sim.svg"));
  assert_int_equal(tu_run(cmd, &out, &err), 0);
}

/* Headless Chromium on a page: the DOM after scripts ran, a screenshot,
** and every console line. */
static int chromium(const char *page, const char *shot, char **dom, char **log)
{
  char cmd[4096], prof[600], *o, *e;
  static char *dom_keep;
  int rc;
  snprintf(prof, sizeof prof, "%s", tu_tmp("chromium-profile"));
  snprintf(cmd, sizeof cmd,
           "timeout 120 chromium --headless --no-sandbox --disable-gpu "
           "--disable-dev-shm-usage --no-first-run "
           "--disable-background-networking --disable-component-update "
           "--disable-sync --user-data-dir='%s' --enable-logging=stderr "
           "--v=0 --window-size=1300,2600 %s%s%s file://%s",
           prof, shot ? "--screenshot='" : "--dump-dom", shot ? shot : "",
           shot ? "'" : "", page);
  rc = tu_sh(cmd, &o, &e);
  free(dom_keep);
  dom_keep = strdup(o);
  *dom = dom_keep;
  *log = e;
  return rc;
}

/* Console lines of a Chromium log (INFO:CONSOLE ...), counted. */
static int console_lines(const char *log, int show)
{
  int n = 0;
  const char *p = log;
  while ((p = strstr(p, ":CONSOLE")) != NULL) {
    const char *e = strchr(p, '\n');
    if (show)
      print_message("console: %.*s\n", e ? (int)(e - p) : 200, p);
    n++;
    p = e ? e : p + 8;
  }
  return n;
}

static void t_chromium(void **state)
{
  struct fixture f;
  char *a, *dom, *log, page[600], bad[600], shot[600];
  FILE *fp;
  size_t len;
  int rc;
  (void)state;
  if (tu_sh("command -v chromium", NULL, NULL) != 0)
    fail_msg("chromium is not installed: run scripts/deps.sh --test (the "
             "report must be checked in a browser)");
  /* the control: a page with console errors must be seen failing */
  snprintf(bad, sizeof bad, "%s", tu_tmp("bad.html"));
  fp = fopen(bad, "w");
  assert_non_null(fp);
  fputs("<!DOCTYPE html><html><body><script>console.error('parplan-probe');"
        "undefinedFunction();</script></body></html>\n",
        fp);
  fclose(fp);
  rc = chromium(bad, NULL, &dom, &log);
  if (rc != 0)
    fail_msg("chromium failed (%d): %s", rc, log);
  assert_true(console_lines(log, 0) >= 2);
  assert_non_null(strstr(log, "parplan-probe"));

  /* the report: renders, its script ran, nothing on the console */
  load(&f);
  a = report_text(&f, 1, "page.html");
  free(a);
  snprintf(page, sizeof page, "%s", tu_tmp("page.html"));
  rc = chromium(page, NULL, &dom, &log);
  if (rc != 0)
    fail_msg("chromium failed (%d): %s", rc, log);
  if (console_lines(log, 1) != 0)
    fail_msg("the report logged to the console");
  assert_non_null(strstr(dom, "data-ready=\"1\""));
  assert_non_null(strstr(dom, "Against the baselines"));
  snprintf(shot, sizeof shot, "%s", tu_tmp("report.png"));
  rc = chromium(page, shot, &dom, &log);
  if (rc != 0)
    fail_msg("chromium screenshot failed (%d): %s", rc, log);
  assert_int_equal(console_lines(log, 1), 0);
  a = tu_slurp(shot, &len);
  assert_non_null(a);
  assert_true(len > 50000); /* a blank page compresses to a few KB */
  assert_memory_equal(a, "\x89PNG", 4);
  free(a);
  /* keep the screenshot where CI can pick it up */
  {
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s/report-screenshot.png'", shot,
             PP_BINARY_DIR);
    assert_int_equal(tu_sh(cmd, NULL, NULL), 0);
  }
  unload(&f);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_contents), cmocka_unit_test(t_errors),
      cmocka_unit_test(t_gantt),    cmocka_unit_test(t_cli),
      cmocka_unit_test(t_chromium),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
