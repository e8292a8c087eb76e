/* test_units.c - token and byte-size parsing. */
#include "check.h"
#include "kvplan.h"

static int tok(const char *s, uint64_t want)
{
    uint64_t v = 0;
    return kvp_parse_tokens(s, &v) == 0 && v == want;
}

static int tok_bad(const char *s)
{
    uint64_t v;
    return kvp_parse_tokens(s, &v) != 0;
}

static int bytes(const char *s, uint64_t want)
{
    uint64_t v = 0;
    return kvp_parse_bytes(s, &v) == 0 && v == want;
}

int main(void)
{
    CHECK("tokens 32768", tok("32768", 32768));
    CHECK("tokens 32k", tok("32k", 32768));
    CHECK("tokens 32K", tok("32K", 32768));
    CHECK("tokens 128k", tok("128k", 131072));
    CHECK("tokens 1m", tok("1m", 1048576));
    CHECK("tokens 2^40 accepted", tok("1099511627776", 1ull << 40));
    CHECK("tokens 1024G is not a length", tok_bad("1024G"));
    CHECK("tokens 0 rejected", tok_bad("0"));
    CHECK("tokens 0k rejected", tok_bad("0k"));
    CHECK("tokens 2^40+1 rejected", tok_bad("1099511627777"));
    CHECK("tokens huge rejected", tok_bad("99999999999999999999999999"));
    CHECK("tokens negative rejected", tok_bad("-5"));
    CHECK("tokens empty rejected", tok_bad(""));
    CHECK("tokens fraction rejected", tok_bad("1.5k"));
    CHECK("tokens trailing junk rejected", tok_bad("32kb"));
    CHECK("bytes 24GiB binary", bytes("24GiB", 24ull << 30));
    CHECK("bytes 24GB SI", bytes("24GB", 24000000000ull));
    CHECK("bytes 24G binary", bytes("24G", 24ull << 30));
    CHECK("bytes plain", bytes("58987118592", 58987118592ull));
    CHECK("bytes 54.94GiB exact, rounded down", bytes("54.94GiB", 58991375810ull));
    CHECK("bytes 0.5 MiB", bytes("0.5MiB", 524288));
    CHECK("bytes case-insensitive", bytes("80gib", 80ull << 30));
    uint64_t v;
    CHECK("bytes 0 rejected", kvp_parse_bytes("0", &v) != 0);
    CHECK("bytes unknown unit rejected", kvp_parse_bytes("3XB", &v) != 0);
    CHECK("bytes overflow rejected", kvp_parse_bytes("99999999999TiB", &v) != 0);
    return check_failures != 0;
}
