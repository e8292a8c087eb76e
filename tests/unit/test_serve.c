/* test_serve.c - the serving simulator's shared pieces: nearest-rank
 * percentiles worked out by hand, and arrival times. */
#include <math.h>

#include "check.h"
#include "serve/serve.h"

static void arrivals(void)
{
    kvp_sim_request req[4] = {{.timestamp = 1000}, {.timestamp = 1500}, {.timestamp = 4000},
                              {.timestamp = 900}};
    kvp_workload w = {.req = req, .n_req = 3, .name = "t"};
    double t[4], u[4];
    kvp_error err;
    CHECK("burst: all at 0", serve_arrivals(&w, SERVE_ARRIVE_ALL, 0, 0, t, &err) == 0 &&
                                 t[0] == 0 && t[2] == 0);
    CHECK("trace: ms from the first, in s",
          serve_arrivals(&w, SERVE_ARRIVE_TRACE, 0, 0, t, &err) == 0 && t[0] == 0 &&
              t[1] == 0.5 && t[2] == 3.0);
    w.n_req = 4;
    CHECK("trace: a request before the first is refused",
          serve_arrivals(&w, SERVE_ARRIVE_TRACE, 0, 0, t, &err) != 0);
    CHECK("poisson: rate 0 refused", serve_arrivals(&w, SERVE_ARRIVE_POISSON, 0, 1, t, &err) != 0);
    CHECK("poisson: increasing, repeatable by seed",
          serve_arrivals(&w, SERVE_ARRIVE_POISSON, 2.0, 7, t, &err) == 0 &&
              serve_arrivals(&w, SERVE_ARRIVE_POISSON, 2.0, 7, u, &err) == 0 && t[0] > 0 &&
              t[1] > t[0] && t[3] > t[2] && t[3] == u[3]);
    /* the mean gap of many draws is 1/rate */
    static kvp_sim_request many[20000];
    static double g[20000];
    kvp_workload m = {.req = many, .n_req = 20000, .name = "m"};
    serve_arrivals(&m, SERVE_ARRIVE_POISSON, 4.0, 42, g, &err);
    CHECK("poisson: 20,000 gaps average 1/rate within 3%", fabs(g[19999] / 20000 - 0.25) < 0.0075);
}

int main(void)
{
    arrivals();
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
