/* test_serve_dist.c - the serving simulator's per-request summaries:
 * nearest-rank percentiles worked out by hand. */
#include "check.h"
#include "serve/serve.h"

int main(void)
{
    double v[10] = {10, 1, 9, 2, 8, 3, 7, 4, 6, 5};
    serve_dist d;
    serve_dist_of(v, 10, &d);
    CHECK("mean of 1..10 is 5.5", d.mean == 5.5);
    CHECK("p50 of 1..10 is 5 (the 5th of 10)", d.p50 == 5);
    CHECK("p90 of 1..10 is 9 (the 9th)", d.p90 == 9);
    CHECK("p99 of 1..10 is 10 (ceil(9.9) = the 10th)", d.p99 == 10);
    double one[1] = {0.25};
    serve_dist_of(one, 1, &d);
    CHECK("one value is every percentile", d.p50 == 0.25 && d.p99 == 0.25 && d.mean == 0.25);
    serve_dist_of(NULL, 0, &d);
    CHECK("no values: all 0", d.mean == 0 && d.p50 == 0 && d.p90 == 0 && d.p99 == 0);
    return check_failures != 0;
}
