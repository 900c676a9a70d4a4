/* Shared between the files of the datatype layer. */
#ifndef AMP_DT_INTERNAL_H
#define AMP_DT_INTERNAL_H

#include "dtype/dt.h"

/* Appends the typemap of one instance of `type` (typed runs if `typed`) to `out`; sets
 * `named` when `type` is predefined. */
int amp_dt_decode(MPI_Datatype type, int typed, amp_seglist_t *out, int *named);

#endif
