#!/usr/bin/env bash
# The checks are single-quoted on purpose: eval expands them when they run, after the case.
# shellcheck disable=SC2016
# Tests tools/prereqs.sh and the launcher's use of it without installing anything: each case runs with
# PATH holding only fake apt-get, id, docker, dockerd, podman, debootstrap, iperf3, promtool (present or
# not, as the case needs) and the few real tools the scripts use. The fake apt-get logs its arguments and
# "installs" a package by creating the fake command it provides.
#   tools/prereqs-test.sh      prints one line per check (ok / not ok) and exits 1 when any failed
# PrereqsScriptTest (server module) runs it in the build.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
BASH_BIN=$(command -v bash)
SCRIPT_BIN=$(command -v script || true)   # util-linux: runs a command on a pseudo-terminal
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

fails=0 n=0
check() {   # check DESCRIPTION COMMAND...: ok when COMMAND succeeds
    local what=$1
    shift
    n=$((n + 1))
    if "$@"; then
        echo "ok $n - $what"
    else
        echo "not ok $n - $what"
        echo "#   apt-get calls: $(tr '\n' '|' <"$T/apt.log")"
        echo "#   exit status: $(cat "$T/rc")"
        sed 's/^/#   stderr: /' "$T/err"
        fails=$((fails + 1))
    fi
}

# The real tools the scripts need, alone in one directory (so no real docker, apt-get or iperf3 is seen).
mkdir -p "$T/sys"
for tool in bash cat cut tr sed grep mkdir touch rm chmod env dirname ls head find timeout; do
    p=$(command -v "$tool") && ln -s "$p" "$T/sys/$tool"
done

fake() {   # fake NAME [BODY]: an executable in $T/bin
    printf '#!%s\n%s\n' "$BASH_BIN" "${2:-exit 0}" >"$T/bin/$1"
    chmod +x "$T/bin/$1"
}

# A fresh machine: root, apt-get, no engine, nothing else. Then the case adds what it wants.
reset() {
    rm -rf "${T:?}/bin" "$T/scapy"
    mkdir -p "$T/bin"
    : >"$T/apt.log"
    : >"$T/stopped"
    echo 0 >"$T/uid"
    fake id "[[ \$1 == -u ]] && cat '$T/uid' || echo 'uid=0(root)'"
    # The python whose scapy is checked: it imports scapy once python3-scapy is "installed".
    fake python3 "[[ -e '$T/scapy' ]]"
    fake apt-get "echo \"\$*\" >>'$T/apt.log'
[[ -e '$T/apt-fails' ]] && exit 100
for p in \"\$@\"; do
    case \$p in
        docker.io) for c in docker dockerd; do printf '#!/bin/sh\nexit 0\n' >'$T/bin/'\$c; chmod +x '$T/bin/'\$c; done ;;
        podman-docker) printf '#!/bin/sh\nexit 0\n' >'$T/bin/docker'; chmod +x '$T/bin/docker' ;;
        debootstrap|iperf3|fakeroot) printf '#!/bin/sh\nexit 0\n' >'$T/bin/'\$p; chmod +x '$T/bin/'\$p ;;
        nftables) printf '#!/bin/sh\nexit 0\n' >'$T/bin/nft'; chmod +x '$T/bin/nft' ;;
        prometheus) printf '#!/bin/sh\nexit 0\n' >'$T/bin/promtool'; chmod +x '$T/bin/promtool' ;;
        python3-scapy) touch '$T/scapy' ;;
    esac
done"
    rm -f "$T/apt-fails"
}
all_present() { fake docker; fake dockerd; fake debootstrap; fake iperf3; fake nft; fake fakeroot; fake promtool; touch "$T/scapy"; }

# run_prereqs ARGS...: ernic_prereqs ARGS with the fake PATH, stdin not a terminal; CI from $CASE_CI.
run_prereqs() {
    env -i PATH="$T/bin:$T/sys" HOME="$T" ${CASE_CI:+CI=$CASE_CI} ERNIC_PREREQS_PYTHON="$T/bin/python3" \
        STOPPED="$T/stopped" "$BASH_BIN" -c 'source "$1"; shift
            ernic_stop_prometheus() { echo stopped >>"$STOPPED"; }
            ernic_prereqs "$@"' _ "$ROOT/tools/prereqs.sh" "$@" \
        </dev/null >"$T/out" 2>"$T/err"
    echo $? >"$T/rc"
}
# on_tty ANSWER ARGS...: the same on a pseudo-terminal, typing ANSWER at the prompt.
on_tty() {
    local answer=$1
    shift
    printf '%s\n' "$answer" | env -i PATH="$T/bin:$T/sys" HOME="$T" ERNIC_PREREQS_PYTHON="$T/bin/python3" \
        STOPPED="$T/stopped" "$SCRIPT_BIN" -qec "$BASH_BIN -c 'source $ROOT/tools/prereqs.sh
            ernic_stop_prometheus() { echo stopped >>\"\$STOPPED\"; }
            ernic_prereqs $*'" /dev/null >"$T/err" 2>&1
    echo $? >"$T/rc"
}

rc_is() { [[ $(cat "$T/rc") == "$1" ]]; }
apt_is() { [[ $(cat "$T/apt.log") == "$1" ]]; }
err_has() { grep -qF -- "$1" "$T/err"; }
no_apt() { [[ ! -s $T/apt.log ]]; }
never_docker_io() { ! grep -q 'docker\.io' "$T/apt.log"; }

# --- what gets installed, by command and by what is there ---
reset; CASE_CI=true run_prereqs demo
check "demo on a fresh machine (CI=true): docker.io and debootstrap, nothing for the tests" \
    eval 'rc_is 0 && apt_is "update -q
install -y -q docker.io debootstrap" && err_has "installing: apt-get update && apt-get install -y docker.io debootstrap"'

reset; CASE_CI=true run_prereqs guest
check "guest on a fresh machine: the same as demo" eval 'rc_is 0 && apt_is "update -q
install -y -q docker.io debootstrap"'

reset; CASE_CI=true run_prereqs bench
check "bench on a fresh machine: the engine, debootstrap and iperf3 (section 7's reference), nothing else" \
    eval 'rc_is 0 && apt_is "update -q
install -y -q docker.io debootstrap iperf3"'

reset; CASE_CI=true run_prereqs test
check "test on a fresh machine: also iperf3, nftables and fakeroot, and python3-scapy and prometheus without recommends; daemon stopped" \
    eval 'rc_is 0 && apt_is "update -q
install -y -q docker.io debootstrap iperf3 nftables fakeroot
install -y -q --no-install-recommends python3-scapy prometheus" && [[ -s $T/stopped ]] && err_has "installed: docker.io debootstrap iperf3 nftables fakeroot python3-scapy prometheus"'

reset; fake docker; fake podman; CASE_CI=true run_prereqs test
check "podman-docker's docker present: no docker.io" \
    eval 'rc_is 0 && never_docker_io && apt_is "update -q
install -y -q debootstrap iperf3 nftables fakeroot
install -y -q --no-install-recommends python3-scapy prometheus"'

reset; fake podman; CASE_CI=true run_prereqs demo
check "podman alone: podman-docker (its docker command), no docker.io" \
    eval 'rc_is 0 && never_docker_io && apt_is "update -q
install -y -q podman-docker debootstrap"'

reset; fake dockerd; CASE_CI=true run_prereqs demo
check "dockerd present without a docker command: no docker.io" eval 'rc_is 0 && never_docker_io'

reset; fake docker; CASE_CI=true run_prereqs demo
check "a docker command whose engine answers (remote, rootless): no docker.io" eval 'rc_is 0 && never_docker_io'

reset; fake docker "[[ \$1 == info ]] && exit 1; exit 0"; CASE_CI=true run_prereqs demo
check "a docker client with no engine behind it: docker.io" \
    eval 'rc_is 0 && apt_is "update -q
install -y -q docker.io debootstrap"'

reset; all_present; run_prereqs test
check "everything present: nothing asked, nothing installed, nothing said" \
    eval 'rc_is 0 && no_apt && [[ ! -s $T/err ]]'

reset; fake docker; fake dockerd; fake debootstrap; fake promtool; CASE_CI=true run_prereqs test
check "test with the engine, debootstrap and promtool there: iperf3, nftables, fakeroot and python3-scapy only, no daemon stopped" \
    eval 'rc_is 0 && apt_is "update -q
install -y -q iperf3 nftables fakeroot
install -y -q --no-install-recommends python3-scapy" && [[ ! -s $T/stopped ]]'

# --- who may install, and asking ---
reset; echo 1000 >"$T/uid"; CASE_CI=true run_prereqs --yes test
check "not root: prints the sudo command, installs nothing, exit 2" \
    eval 'rc_is 2 && no_apt && err_has "sudo apt-get update && sudo apt-get install -y docker.io debootstrap iperf3 nftables fakeroot && sudo apt-get install -y --no-install-recommends python3-scapy prometheus"'

reset; rm "$T/bin/apt-get"; CASE_CI=true run_prereqs demo
check "no apt-get (not Debian): names the packages and the Debian command, exit 2" \
    eval 'rc_is 2 && err_has "not a Debian system" && err_has "apt-get install -y docker.io debootstrap"'

reset; CASE_CI='' run_prereqs demo
check "root, stdin not a terminal, no --yes, no CI: prints the command, installs nothing, exit 2" \
    eval 'rc_is 2 && no_apt && err_has "no terminal to ask on" && err_has "apt-get update && apt-get install -y docker.io debootstrap"'

reset; CASE_CI=1 run_prereqs demo
check "CI=1 is not CI=true: not installed without a terminal" eval 'rc_is 2 && no_apt'

reset; CASE_CI='' run_prereqs --yes demo
check "--yes installs without a terminal" eval 'rc_is 0 && apt_is "update -q
install -y -q docker.io debootstrap"'

reset; touch "$T/apt-fails"; CASE_CI=true run_prereqs demo
check "apt-get failing: exit 1" eval 'rc_is 1 && err_has "apt-get update failed"'

if [[ -n $SCRIPT_BIN ]]; then
    reset; on_tty y demo
    check "on a terminal: asks [y/N]; y installs" \
        eval 'rc_is 0 && err_has "[y/N]" && apt_is "update -q
install -y -q docker.io debootstrap"'
    reset; on_tty "" demo
    check "on a terminal: Enter means no; installs nothing, prints the command, exit 2" \
        eval 'rc_is 2 && err_has "[y/N]" && no_apt && err_has "nothing installed"'
    reset; on_tty n test
    check "on a terminal: n installs nothing" eval 'rc_is 2 && no_apt'
    reset; echo 1000 >"$T/uid"; on_tty y demo
    check "on a terminal but not root: no question, the sudo command" \
        eval 'rc_is 2 && no_apt && ! err_has "[y/N]" && err_has "sudo apt-get install -y docker.io debootstrap"'
else
    echo "# skipped the terminal cases: no script(1) (util-linux)"
fi

# --- the launcher: --yes is taken out of the arguments, prerequisites come before the build ---
# A copy of the launcher in a fake source tree: mvnw, guest/build.sh and java only log their arguments.
L="$T/tree"
mkdir -p "$L/tools" "$L/guest" "$L/demo" "$L/jdk/bin"
cp "$ROOT/ernic" "$L/ernic"
cp "$ROOT/tools/prereqs.sh" "$L/tools/"
touch "$L/pom.xml" "$L/demo/demo.sh"
printf '#!%s\necho "mvnw $*" >>%q\n' "$BASH_BIN" "$T/calls" >"$L/mvnw"
printf 'echo "guest-build $*" >>%q\n' "$T/calls" >"$L/guest/build.sh"
# java logs the main class and what follows it.
printf '#!%s\n[[ $1 == -XshowSettings:properties ]] && { echo "    java.specification.version = 25" >&2; exit 0; }
while (($#)) && [[ $1 != ernic.* ]]; do shift; done\necho "java $*" >>%q\n' \
    "$BASH_BIN" "$T/calls" >"$L/jdk/bin/java"
cp "$L/jdk/bin/java" "$L/jdk/bin/javac"
chmod +x "$L/ernic" "$L/mvnw" "$L/jdk/bin/java" "$L/jdk/bin/javac"
launch() {
    : >"$T/calls"
    rm -rf "${L:?}/target"   # the build stamp: every case builds
    env -i PATH="$T/bin:$T/sys" HOME="$T" JAVA_HOME="$L/jdk" ${CASE_CI:+CI=$CASE_CI} ${CASE_ENV:+"$CASE_ENV"} \
        ERNIC_PREREQS_PYTHON="$T/bin/python3" "$BASH_BIN" "$L/ernic" "$@" </dev/null >"$T/out" 2>"$T/err"
    echo $? >"$T/rc"
}
calls_are() { [[ $(cat "$T/calls") == "$1" ]]; }

reset; CASE_CI='' launch test --yes -pl server -Dtest=X
check "./ernic test --yes ARGS: installs, builds the image, passes ARGS without --yes to mvnw" \
    eval 'rc_is 0 && grep -q "install -y -q docker.io debootstrap iperf3" "$T/apt.log" && calls_are "guest-build 
mvnw -B verify -pl server -Dtest=X"'

reset; CASE_CI='' launch test -pl server
check "./ernic test without --yes and without a terminal: exit 2 before Maven, says how to skip" \
    eval 'rc_is 2 && no_apt && [[ ! -s $T/calls ]] && err_has "ERNIC_NO_PREREQS=1"'

reset; CASE_CI='' CASE_ENV=ERNIC_NO_PREREQS=1 launch test -q
check "ERNIC_NO_PREREQS=1 ./ernic test: no installing, no image, straight to Maven" \
    eval 'rc_is 0 && no_apt && calls_are "mvnw -B verify -q"'

reset; CASE_CI='' CASE_ENV=ERNIC_NO_PREREQS=1 launch test --long -q
check "./ernic test --long: only the tests tagged long (the pom's exclusion emptied)" \
    eval 'rc_is 0 && calls_are "mvnw -B verify -Dernic.test.groups=long -Dernic.test.excludedGroups= -q"'

reset; CASE_CI=true launch demo
check "./ernic demo (CI=true): installs, builds the image, builds, runs demo.sh" \
    eval 'rc_is 0 && apt_is "update -q
install -y -q docker.io debootstrap" && calls_are "guest-build 
mvnw -q -B install -DskipTests
java ernic.it.harness.GuestRun $L/demo/demo.sh"'

reset; CASE_CI='' launch guest run --yes --vms 2 s.sh
check "./ernic guest run --yes ARGS: installs, image, then GuestRun gets ARGS without --yes" \
    eval 'rc_is 0 && ! no_apt && calls_are "guest-build 
mvnw -q -B install -DskipTests
java ernic.it.harness.GuestRun --vms 2 s.sh"'

reset; CASE_CI=true launch bench --only 7 --quick
check "./ernic bench --only 7 (CI=true): installs the engine, debootstrap and iperf3, builds, runs the suite" \
    eval 'rc_is 0 && apt_is "update -q
install -y -q docker.io debootstrap iperf3" && calls_are "mvnw -q -B install -DskipTests
java ernic.it.bench.BenchSuite --out $L/target/bench --only 7 --quick"'

reset; CASE_CI='' launch bench Doorbell
check "./ernic bench REGEX (JMH): nothing installed" eval 'rc_is 0 && no_apt'

reset; all_present; CASE_CI='' launch guest build
check "./ernic guest build with everything present: straight to guest/build.sh" \
    eval 'rc_is 0 && no_apt && calls_are "guest-build "'

echo "1..$n"
((fails == 0)) || { echo "# $fails of $n failed"; exit 1; }
