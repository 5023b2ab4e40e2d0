# shellcheck shell=bash
# The Debian packages ./ernic demo, ./ernic guest, ./ernic test and .ci/run need, and installing them:
# one list, sourced by the launcher and by .ci/run. Functions return (never exit).
#
#   ernic_prereqs [--yes] demo|guest|bench|test|dist
#       Installs what the command needs and is missing, saying what and why. As root on Debian (apt-get)
#       it asks first ([y/N]) when stdin is a terminal; --yes or CI=true installs without asking. When
#       it cannot or may not install (not root, no apt-get, no terminal to ask on, the answer no), it
#       prints the command to run and returns 2. Returns 1 when apt-get fails, 0 when nothing is missing.
#   ernic_prereqs_missing demo|guest|bench|test|dist
#       Prints the missing packages, one line each: PACKAGE, a tab, why it is needed.
#   ernic_stop_prometheus
#       Stops and disables Debian's prometheus daemon (we install the package for promtool only).
#
# dist (./ernic dist --deb) needs what jpackage builds a .deb with: fakeroot and dpkg-deb.
# demo and guest need a container engine and debootstrap (the guest image build); bench those and iperf3
# (section 7's reference, iperf3 between a guest and the host); test needs those too, and iperf3 (the host end
# of the guest TCP tests), python3-scapy (a test reads a pcap with
# /usr/bin/python3's scapy), promtool (package prometheus, installed without its recommends), nft
# (nftables: MeshFaultTest's packet loss and partitions; this kernel has no netem) and fakeroot (DebianPackageTest
# builds the .deb).
# A container engine that is present is used, never joined by a second one: dockerd, podman, or a docker
# command whose engine answers (docker info) means no docker.io; podman alone gets podman-docker, its
# docker command. A docker client with no engine behind it gets docker.io.

# Packages installed with --no-install-recommends: prometheus would bring node-exporter, python3-scapy
# ipython3; neither is used.
ERNIC_PREREQS_NORECS="prometheus python3-scapy"

# The python whose scapy the pcap test uses.
ERNIC_PREREQS_PYTHON="${ERNIC_PREREQS_PYTHON:-/usr/bin/python3}"

_ernic_prereqs_say() { printf 'ernic: %s\n' "$*" >&2; }

ernic_prereqs_missing() {
    local kind=${1:?usage: ernic_prereqs_missing demo|guest|bench|test|dist}
    case "$kind" in
        demo|guest|bench|test) ;;
        dist)
            command -v fakeroot >/dev/null 2>&1 || printf 'fakeroot\tjpackage builds the .deb under fakeroot\n'
            command -v dpkg-deb >/dev/null 2>&1 || printf 'dpkg\tjpackage packs the .deb with dpkg-deb\n'
            return 0 ;;
        *) _ernic_prereqs_say "ernic_prereqs: unknown command kind '$kind'"; return 2 ;;
    esac
    if command -v podman >/dev/null 2>&1; then
        command -v docker >/dev/null 2>&1 ||
            printf 'podman-docker\tthe docker command for the podman that is installed (no second engine)\n'
    elif ! command -v dockerd >/dev/null 2>&1 &&
        ! { command -v docker >/dev/null 2>&1 && timeout 20 docker info >/dev/null 2>&1; }; then
        # A docker client alone (some machines ship one in /usr/local/bin) is not an engine, unless an
        # engine answers it (a remote or rootless one).
        printf 'docker.io\tthe container engine the guests run in\n'
    fi
    command -v debootstrap >/dev/null 2>&1 || printf 'debootstrap\tbuilds the guest image from Debian sid\n'
    if [[ $kind == bench ]]; then
        command -v iperf3 >/dev/null 2>&1 ||
            printf 'iperf3\tthe host end of section 7'"'"'s reference (iperf3 between a guest and the host)\n'
        return 0
    fi
    [[ $kind == test ]] || return 0
    command -v iperf3 >/dev/null 2>&1 || printf 'iperf3\tthe host end of the guest TCP tests\n'
    command -v nft >/dev/null 2>&1 ||
        printf 'nftables\tthe mesh fault tests drop packets between network namespaces with nft\n'
    command -v fakeroot >/dev/null 2>&1 ||
        printf 'fakeroot\tDebianPackageTest builds the .deb (./ernic dist --deb'"'"'s quick form) under fakeroot\n'
    "$ERNIC_PREREQS_PYTHON" -c 'import scapy' >/dev/null 2>&1 ||
        printf 'python3-scapy\ta test reads the --trace-rdma pcap with %s and scapy\n' "$ERNIC_PREREQS_PYTHON"
    command -v promtool >/dev/null 2>&1 ||
        printf 'prometheus\tfor promtool, which checks the metrics scrape (its daemon is stopped and disabled)\n'
    return 0
}

ernic_stop_prometheus() {
    if command -v systemctl >/dev/null 2>&1 && [[ -d /run/systemd/system ]]; then
        systemctl disable --now prometheus >/dev/null 2>&1 || true
    elif [[ -x /etc/init.d/prometheus ]]; then
        /etc/init.d/prometheus stop >/dev/null 2>&1 || true
        command -v update-rc.d >/dev/null 2>&1 && update-rc.d prometheus disable >/dev/null 2>&1
    fi
    return 0
}

ernic_prereqs() {
    local yes=0 kind=""
    while (($#)); do
        case "$1" in
            --yes) yes=1 ;;
            *) kind=$1 ;;
        esac
        shift
    done
    local list
    list=$(ernic_prereqs_missing "$kind") || return 2
    [[ -n $list ]] || return 0

    local pkg why plain=() norecs=()
    _ernic_prereqs_say "./ernic $kind needs Debian packages that are not installed:"
    while IFS=$'\t' read -r pkg why; do
        _ernic_prereqs_say "  - $pkg: $why"
        if [[ " $ERNIC_PREREQS_NORECS " == *" $pkg "* ]]; then norecs+=("$pkg"); else plain+=("$pkg"); fi
    done <<<"$list"

    # The commands, as words to run and as a line to print (with sudo in front of each when not root).
    local root=0 sudo=""
    [[ $(id -u) == 0 ]] && root=1
    ((root)) || sudo="sudo "
    local line="${sudo}apt-get update"
    ((${#plain[@]})) && line+=" && ${sudo}apt-get install -y ${plain[*]}"
    ((${#norecs[@]})) && line+=" && ${sudo}apt-get install -y --no-install-recommends ${norecs[*]}"

    if ! command -v apt-get >/dev/null 2>&1; then
        _ernic_prereqs_say "this is not a Debian system (no apt-get): install those packages' equivalents with your"
        _ernic_prereqs_say "package manager and run again. On Debian the command would be:"
        printf '  %s\n' "$line" >&2
        return 2
    fi
    if ((!root)); then
        _ernic_prereqs_say "installing them needs root; run this, then run ./ernic $kind again:"
        printf '  %s\n' "$line" >&2
        return 2
    fi
    if ((!yes)) && [[ ${CI:-} != true ]]; then
        if [[ -t 0 ]]; then
            local answer=""
            printf 'ernic: install them now (%s)? [y/N] ' "$line" >&2
            read -r answer || answer=""
            if [[ $answer != [yY] && $answer != [yY][eE][sS] ]]; then
                _ernic_prereqs_say "nothing installed. To install them yourself:"
                printf '  %s\n' "$line" >&2
                return 2
            fi
        else
            _ernic_prereqs_say "nothing installed: there is no terminal to ask on. Pass --yes (or set CI=true) to"
            _ernic_prereqs_say "install without asking, or run:"
            printf '  %s\n' "$line" >&2
            return 2
        fi
    fi

    _ernic_prereqs_say "installing: $line"
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get update -q; then
        _ernic_prereqs_say "apt-get update failed"
        return 1
    fi
    if ((${#plain[@]})) && ! apt-get install -y -q "${plain[@]}"; then
        _ernic_prereqs_say "apt-get install ${plain[*]} failed"
        return 1
    fi
    if ((${#norecs[@]})) && ! apt-get install -y -q --no-install-recommends "${norecs[@]}"; then
        _ernic_prereqs_say "apt-get install --no-install-recommends ${norecs[*]} failed"
        return 1
    fi
    # Installing prometheus starts its daemon; we wanted promtool only.
    [[ " ${norecs[*]} " == *" prometheus "* ]] && ernic_stop_prometheus
    list=$(ernic_prereqs_missing "$kind")
    if [[ -n $list ]]; then
        _ernic_prereqs_say "still missing after apt-get: $(cut -f1 <<<"$list" | tr '\n' ' ')"
        return 1
    fi
    _ernic_prereqs_say "installed: ${plain[*]}${plain[*]:+${norecs[*]:+ }}${norecs[*]}"
    return 0
}
