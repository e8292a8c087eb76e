/* check.h - the smallest test harness: each CHECK prints "ok NAME" or
 * "FAIL NAME: expr" (tests/run.sh counts them); main returns failures. */
#ifndef KVPLAN_CHECK_H
#define KVPLAN_CHECK_H

#include <stdio.h>

static int check_failures;

#define CHECK(name, expr)                                                   \
    do {                                                                    \
        if (expr)                                                           \
            printf("ok %s\n", name);                                        \
        else {                                                              \
            printf("FAIL %s: %s (%s:%d)\n", name, #expr, __FILE__, __LINE__); \
            check_failures++;                                               \
        }                                                                   \
    } while (0)

#endif
