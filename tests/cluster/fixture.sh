#!/usr/bin/env bash
# fixture.sh up|down CLUSTER_SH: brings the emulated cluster up before the tests of the label
# "cluster" and down after them (4 compute nodes, 3 storage nodes, the default links). Exit 77
# (skipped) unless AMPIO_TEST_CLUSTER=1 or when the machine cannot run it (lib.sh); the tests
# then skip as well.
set -u
cluster=$2
. "$(dirname "$0")/lib.sh"
cluster_wanted
case $1 in
up) exec bash "$cluster" up --compute 4 --storage 3 ;;
down) exec bash "$cluster" down ;;
*) echo "fixture.sh: up or down" >&2; exit 2 ;;
esac
