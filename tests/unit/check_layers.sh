#!/usr/bin/env bash
# check_layers.sh SRC_DIR
#
# Layers call downward only: a source file of src/<layer>/ includes headers of its own layer
# and of lower floors, never of a floor above or of a peer on its own floor. The floors, from
# the bottom (docs/DESIGN.md draws the same):
floors=(
    "core"            # errors, configuration, agreement, node layout, tasks, I/O threads
    "dtype fs"        # datatype flattening; POSIX file access and locks
    "io"              # the file object, views, independent transfer, data representations
    "coll sharedfp"   # collective access; shared file pointers
    "op"              # the path of each access, requests and their progress
    "file"            # open, close, control routines, handles, error handlers, set-up
    "api"             # the PMPI_File_* entry points
)
set -u
src=$1
floor_of() {
    local i
    for i in "${!floors[@]}"; do
        for d in ${floors[$i]}; do [ "$d" = "$1" ] && { echo "$i"; return; }; done
    done
    echo -1
}
status=0
for dir in "$src"/*/; do
    layer=$(basename "$dir")
    mine=$(floor_of "$layer")
    if [ "$mine" -lt 0 ]; then
        echo "src/$layer is on no floor: add it to $0 and docs/DESIGN.md"
        status=1
        continue
    fi
    while IFS=: read -r file inc; do
        target=${inc%%/*}
        [ "$target" = "$layer" ] && continue
        theirs=$(floor_of "$target")
        [ "$theirs" -lt 0 ] && continue # not a layer (ampio.h, system headers)
        if [ "$theirs" -ge "$mine" ]; then
            echo "${file#"$src"/} includes $inc: $target is not below $layer"
            status=1
        fi
    done < <(grep -o '#include "[^"]*"' "$dir"*.[ch] | sed 's/#include "//; s/"$//')
done
[ $status -eq 0 ] && echo "check_layers: every include goes downward"
exit $status
