#include "core/agree.h"

#include <string.h>

#include "core/err.h"
#include "core/task.h"

int amp_agree(MPI_Comm comm, int code)
{
    int rank;
    PMPI_Comm_rank(comm, &rank);
    struct {
        int cls, rank;
    } in = {amp_err_class(code), rank}, out;
    int rc = amp_task_agree_allreduce(&in, &out, 1, MPI_2INT, MPI_MAXLOC, comm);
    if (rc != MPI_SUCCESS)
        return code != MPI_SUCCESS ? code : rc;
    if (out.cls == MPI_SUCCESS)
        return MPI_SUCCESS;
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (rank == out.rank)
        PMPI_Error_string(code, msg, &len);
    amp_task_agree_bcast(msg, MPI_MAX_ERROR_STRING, MPI_CHAR, out.rank, comm);
    if (code != MPI_SUCCESS)
        return code;
    msg[MPI_MAX_ERROR_STRING - 1] = '\0';
    for (char *p = msg; *p; p++)
        if (*p == '\n')
            *p = ' ';
    return amp_err(out.cls, "failed on rank %d: %s", out.rank, msg);
}

int amp_agree_or(MPI_Comm comm, int code, uint64_t *words, int n)
{
    if (n < 0 || n > AMP_AGREE_OR_WORDS)
        return amp_err(MPI_ERR_INTERN, "amp_agree_or takes at most %d words", AMP_AGREE_OR_WORDS);
    /* always the full size: ranks that took different paths (an open that creates and one that
     * does not, where the access modes differ) still meet in one reduction of one size */
    uint64_t in[AMP_AGREE_OR_WORDS + 1] = {0}, out[AMP_AGREE_OR_WORDS + 1];
    in[0] = code != MPI_SUCCESS;
    memcpy(in + 1, words, (size_t)n * sizeof(*words));
    int rc = amp_task_agree_allreduce(in, out, AMP_AGREE_OR_WORDS + 1, MPI_UINT64_T, MPI_BOR, comm);
    if (rc != MPI_SUCCESS)
        return code != MPI_SUCCESS ? code : rc;
    if (out[0]) /* every rank saw it: every rank takes the step that names who failed */
        return amp_agree(comm, code);
    memcpy(words, out + 1, (size_t)n * sizeof(*words));
    return MPI_SUCCESS;
}

int amp_agree_or_same(const uint64_t *words, uint64_t value)
{
    /* or-ed, value comes back unchanged when no rank had a bit it lacks, and ~value when no rank
     * lacked a bit it has */
    return words[0] == value && words[1] == ~value;
}

int amp_agree_same_any(MPI_Comm comm, uint64_t value, int flag, int *same, int *any)
{
    uint64_t in[3] = {value, ~value, flag != 0}, out[3];
    int rc = amp_task_agree_allreduce(in, out, 3, MPI_UINT64_T, MPI_MAX, comm);
    *same = rc == MPI_SUCCESS && out[0] == value && out[1] == ~value;
    *any = rc == MPI_SUCCESS && out[2] != 0;
    return rc;
}

int amp_agree_same_n(MPI_Comm comm, const uint64_t *values, int n, int *same)
{
    if (n > 4)
        n = 4;
    uint64_t in[8] = {0}, out[8] = {0};
    for (int i = 0; i < n; i++) {
        in[2 * i] = values[i];
        in[2 * i + 1] = ~values[i];
    }
    int rc = amp_task_agree_allreduce(in, out, 2 * n, MPI_UINT64_T, MPI_MAX, comm);
    *same = rc == MPI_SUCCESS;
    for (int i = 0; i < 2 * n; i++)
        *same &= out[i] == in[i];
    return rc;
}
