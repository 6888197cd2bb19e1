/* runstat: runs a command and prints "wall_ns maxrss_kib user_us sys_us exit_code".
 *
 * usage: runstat CPU|-1 COMMAND [ARG...]
 *
 * It pins itself (and so the child) to core CPU unless CPU is -1, forks, execs COMMAND,
 * waits with wait4 and reports the child's rusage. Wall time is CLOCK_MONOTONIC from
 * just before fork to just after wait4. The measuring process is a small C program on
 * purpose: Linux reports in ru_maxrss the largest RSS the child ever had, and a child
 * forked from a big process (a Python interpreter: ~13 MiB) starts with its parent's
 * resident set until exec, which would hide the real figure for small builds.
 * stdout/stderr of the child are inherited. Built by bench/compile/run.sh; stdlib/POSIX.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: runstat CPU|-1 COMMAND [ARG...]\n");
    return 2;
  }
  int cpu = atoi(argv[1]);
  if (cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
      perror("runstat: sched_setaffinity");
      return 2;
    }
  }
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pid_t pid = fork();
  if (pid < 0) {
    perror("runstat: fork");
    return 2;
  }
  if (pid == 0) {
    execv(argv[2], argv + 2);
    perror("runstat: exec");
    _exit(127);
  }
  int status = 0;
  struct rusage ru;
  if (wait4(pid, &status, 0, &ru) < 0) {
    perror("runstat: wait4");
    return 2;
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  long long wall = (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  fprintf(stderr, "runstat: %lld %ld %lld %lld %d\n", wall, ru.ru_maxrss,
          (long long)ru.ru_utime.tv_sec * 1000000LL + ru.ru_utime.tv_usec,
          (long long)ru.ru_stime.tv_sec * 1000000LL + ru.ru_stime.tv_usec, code);
  return 0;
}
