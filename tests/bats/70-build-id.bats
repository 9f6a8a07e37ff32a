#!/usr/bin/env bats
# The build id in the tune cache's validator (cmake/gs_build_id.cmake): a
# hash of the library's sources, so a cache tuned by another build is stale
# even at the same commit; an unchanged tree leaves the header untouched (no
# recompile).

setup() {
    SCRIPT="${SHIM_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/cmake/gs_build_id.cmake"
    CMAKE=${CMAKE_COMMAND:-cmake}
    SRC="$BATS_TEST_TMPDIR/src"
    OUT="$BATS_TEST_TMPDIR/gs_build_id.h"
    mkdir -p "$SRC/shim" "$SRC/kernels/x" "$SRC/docs"
    echo "int a;" > "$SRC/shim/a.c"
    echo "int k;" > "$SRC/kernels/x/k.cu"
    echo "notes" > "$SRC/docs/n.md"
}

build_id() {
    "$CMAKE" -DSRC_DIR="$SRC" -DOUT="$OUT" -DCONFIG="${CONFIG:-Release|OFF}" -P "$SCRIPT"
    sed -n 's/^#define GS_BUILD_ID "\([0-9a-f]*\)"$/\1/p' "$OUT"
}

@test "the build id changes with a source and stays with the rest" {
    id1=$(build_id)
    [ ${#id1} -eq 12 ]
    before=$(stat -c %.9Y "$OUT")
    sleep 1
    [ "$(build_id)" = "$id1" ]
    after=$(stat -c %.9Y "$OUT")
    [ "$before" = "$after" ]                # unchanged: not rewritten
    echo "notes 2" > "$SRC/docs/n.md"       # not a library source
    [ "$(build_id)" = "$id1" ]
    echo "data" > "$SRC/kernels/x/names.txt" # nor is a data file beside one
    [ "$(build_id)" = "$id1" ]
    echo "int k2;" > "$SRC/kernels/x/k.cu"  # a kernel edit
    id2=$(build_id)
    [ "$id2" != "$id1" ]
    echo "int b;" > "$SRC/shim/b.c"         # a new file
    id3=$(build_id)
    [ "$id3" != "$id2" ]
    ln -s "$SRC/nowhere" "$SRC/shim/.#b.c"  # an editor's dangling lock link
    [ "$(build_id)" = "$id3" ]
    [ "$(CONFIG='Release|ON' build_id)" != "$id3" ]  # a timeline build is another build
}
