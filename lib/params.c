/* params.c - placeholder until the parameter counter lands. */
#include "kvp_int.h"

uint64_t kvp_model_param_count(const kvp_model *m)
{
    (void)m;
    return 0;
}
