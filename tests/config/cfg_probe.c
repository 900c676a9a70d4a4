/* Opens DIR/probe.dat on every rank with the hints given and checks what MPI_File_get_info
 * reports, so that cfg_run.sh can drive the configuration sources (AMPIO_HINTS, hints,
 * AMPIO_* variables, the config file, defaults) from outside.
 *
 *   cfg_probe DIR [WORD...]
 *     hint:KEY=VALUE      a hint passed to MPI_File_open
 *     fail:TEXT           the open must fail with MPI_ERR_INFO naming TEXT (nothing else runs;
 *                         several fail: words must all be named)
 *     set:KEY=VALUE       a hint passed to MPI_File_set_info after the open
 *     setfail:TEXT        that MPI_File_set_info must fail with MPI_ERR_INFO naming TEXT
 *     write               a collective write of interleaved pieces, read back and checked
 *     write-blocks        the same with one contiguous block per rank
 *     expect:KEY=VALUE    MPI_File_get_info reports VALUE for KEY (checked last)
 *     absent:KEY          MPI_File_get_info reports no KEY
 *     present:KEY         MPI_File_get_info reports KEY with some value
 *     items:KEY=N         the value of KEY is a comma-separated list of N items
 * Every rank checks; words of the form @R:WORD apply to rank R only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amptest.h"

#define PIECE  512
#define ROUNDS 64

/* The word for this rank: "@R:" prefixes keep words to one rank. */
static const char *mine(const char *word)
{
    if (word[0] != '@')
        return word;
    char *end;
    long r = strtol(word + 1, &end, 10);
    if (*end != ':')
        return word;
    return r == amptest_rank ? end + 1 : NULL;
}

/* Splits "KEY=VALUE" after `prefix`; returns 0 when `word` has another prefix. */
static int split(const char *word, const char *prefix, char *key, char *value)
{
    size_t n = strlen(prefix);
    if (strncmp(word, prefix, n) != 0)
        return 0;
    const char *eq = strchr(word + n, '=');
    if (!eq) {
        snprintf(key, MPI_MAX_INFO_KEY + 1, "%s", word + n);
        value[0] = '\0';
        return 1;
    }
    snprintf(key, MPI_MAX_INFO_KEY + 1, "%.*s", (int)(eq - word - n), word + n);
    snprintf(value, MPI_MAX_INFO_VAL + 1, "%s", eq + 1);
    return 1;
}

static void error_names(int rc, const char *needle, const char *what)
{
    if (!amptest_class(rc, MPI_ERR_INFO, what))
        return;
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, text, &len);
    amptest_check(strstr(text, needle) != NULL, "%s: the message \"%s\" does not name %s", what,
                  text, needle);
}

static void collective_write(MPI_File fh, int blocks)
{
    MPI_Datatype ft;
    if (blocks)
        MPI_Type_contiguous(PIECE * ROUNDS, MPI_BYTE, &ft);
    else
        MPI_Type_vector(ROUNDS, PIECE, PIECE * amptest_size, MPI_BYTE, &ft);
    MPI_Type_commit(&ft);
    amptest_ok(MPI_File_set_view(fh, (MPI_Offset)amptest_rank * PIECE * (blocks ? ROUNDS : 1),
                                 MPI_BYTE, ft, "native", MPI_INFO_NULL),
               "set_view");
    unsigned char data[PIECE * ROUNDS], back[PIECE * ROUNDS];
    for (int i = 0; i < PIECE * ROUNDS; i++)
        data[i] = amptest_byte(amptest_rank, i);
    amptest_ok(MPI_File_write_at_all(fh, 0, data, PIECE * ROUNDS, MPI_BYTE, MPI_STATUS_IGNORE),
               "write_at_all");
    amptest_ok(MPI_File_read_at_all(fh, 0, back, PIECE * ROUNDS, MPI_BYTE, MPI_STATUS_IGNORE),
               "read_at_all");
    amptest_check(memcmp(data, back, sizeof(data)) == 0, "the data read back differs");
    MPI_Type_free(&ft);
}

static void check_info(MPI_File fh, int argc, char **argv)
{
    MPI_Info info;
    if (!amptest_ok(MPI_File_get_info(fh, &info), "get_info"))
        return;
    for (int a = 2; a < argc; a++) {
        const char *word = mine(argv[a]);
        char key[MPI_MAX_INFO_KEY + 1], want[MPI_MAX_INFO_VAL + 1], got[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        if (!word)
            continue;
        if (split(word, "expect:", key, want)) {
            MPI_Info_get(info, key, MPI_MAX_INFO_VAL, got, &flag);
            amptest_check(flag && strcmp(got, want) == 0, "get_info: %s is %s, expected %s", key,
                          flag ? got : "(absent)", want);
        } else if (split(word, "absent:", key, want)) {
            MPI_Info_get(info, key, MPI_MAX_INFO_VAL, got, &flag);
            amptest_check(!flag, "get_info: %s is %s, expected no such key", key, got);
        } else if (split(word, "present:", key, want)) {
            MPI_Info_get(info, key, MPI_MAX_INFO_VAL, got, &flag);
            amptest_check(flag && got[0], "get_info: no %s", key);
        } else if (split(word, "items:", key, want)) {
            MPI_Info_get(info, key, MPI_MAX_INFO_VAL, got, &flag);
            int items = flag && got[0] ? 1 : 0;
            for (const char *p = got; flag && *p; p++)
                items += *p == ',';
            amptest_check(items == atoi(want), "get_info: %s is \"%s\", expected %s items", key,
                          flag ? got : "(absent)", want);
        }
    }
    MPI_Info_free(&info);
}

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    MPI_Info hints, later;
    MPI_Info_create(&hints);
    MPI_Info_create(&later);
    const char *fail[8], *setfail = NULL;
    int nfail = 0, write = 0, nlater = 0;
    for (int a = 2; a < argc; a++) {
        const char *word = mine(argv[a]);
        char key[MPI_MAX_INFO_KEY + 1], value[MPI_MAX_INFO_VAL + 1];
        if (!word)
            continue;
        if (split(word, "hint:", key, value))
            MPI_Info_set(hints, key, value);
        else if (split(word, "set:", key, value))
            MPI_Info_set(later, key, value), nlater++;
        else if (strncmp(word, "fail:", 5) == 0 && nfail < 8)
            fail[nfail++] = word + 5;
        else if (strncmp(word, "setfail:", 8) == 0)
            setfail = word + 8;
        else if (strcmp(word, "write") == 0)
            write = 1;
        else if (strcmp(word, "write-blocks") == 0)
            write = 2;
    }
    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_WORLD, amptest_path("probe.dat"),
                           MPI_MODE_RDWR | MPI_MODE_CREATE, hints, &fh);
    if (nfail) {
        for (int i = 0; i < nfail; i++)
            error_names(rc, fail[i], "open");
        if (rc == MPI_SUCCESS)
            MPI_File_close(&fh);
    } else if (amptest_ok(rc, "open")) {
        if (nlater || setfail) {
            rc = MPI_File_set_info(fh, later);
            if (setfail)
                error_names(rc, setfail, "set_info");
            else
                amptest_ok(rc, "set_info");
        }
        if (write)
            collective_write(fh, write == 2);
        check_info(fh, argc, argv);
        amptest_ok(MPI_File_close(&fh), "close");
    }
    MPI_Info_free(&hints);
    MPI_Info_free(&later);
    return amptest_finish();
}
