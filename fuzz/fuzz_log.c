/* fuzz_log.c - libFuzzer target: any bytes as a runtime log.  The parser
 * must take garbage, huge lines and binary data without a crash or hang. */
#include <stdint.h>

#include "kvplan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kvp_log L;
    kvp_error e;
    kvp_log_parse((const char *)data, size, "fuzz.log", &L, &e);
    return 0;
}
