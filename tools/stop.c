/* SPDX-License-Identifier: MIT */
/*
** Ctrl-C and SIGTERM during a long command (docs/PLANNER.md, "Time limit
** and interrupts"):
** the first asks the library to stop and keep what it found (the
** search's params.stop flag), the second ends the process at once.
** The handler only stores a sig_atomic_t or calls _exit, both
** async-signal-safe (POSIX.1-2017 2.4.3).
**
** And the command's own clock: a time limit bounds the whole command,
** so what reading the inputs took (building a 16,384-GPU cluster's
** bandwidth matrix takes seconds) comes off the search's share.
*/
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop_signal;
static double started_s = -1;

static double mono_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void cli_clock_start(void)
{
  started_s = mono_s();
}

double cli_clock_left(double limit_s)
{
  double left = started_s < 0 ? limit_s : limit_s - (mono_s() - started_s);
  return left > 1e-3 ? left : 1e-3; /* spent: the search stops at once */
}
static struct sigaction old_int, old_term;

static void on_stop(int sig)
{
  if (stop_signal)
    _exit(128 + sig); /* the second: at once, as the user asked */
  stop_signal = sig;
}

const volatile sig_atomic_t *cli_catch_stop(void)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop;
  sigemptyset(&sa.sa_mask);
  stop_signal = 0;
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  return &stop_signal;
}

int cli_release_stop(void)
{
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  return (int)stop_signal;
}
