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

int amp_agree_same(MPI_Comm comm, uint64_t value, int *same)
{
    int any;
    return amp_agree_same_any(comm, value, 0, same, &any);
}
