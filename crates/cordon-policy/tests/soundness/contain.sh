# Runs inside `unshare --user --map-root-user --mount --net --pid --fork`: builds a
# throwaway root for one command of the soundness corpus, runs the command in it under
# strace, and lists what the fake home and /tmp hold afterwards.
#
# $1 ROOT   an empty host directory; a tmpfs is mounted on it, and it becomes `/`
# $2 SEED   a host directory whose `home/` is copied into the new root's /home
# $3 OUT    a host directory for the trace, the exit status and the listing
# $4 TEXT   the shell text to run
#
# Everything the command can write is a tmpfs of this mount namespace (/home, /tmp,
# /var/tmp, /dev/shm); the system directories are read-only binds, /proc/sys and the
# other kernel knobs are read-only, there is no network interface but a down loopback,
# and the namespaces die with the PID namespace's first process.
set -eu
ROOT=$1 SEED=$2 OUT=$3 TEXT=$4

# Make every mount at or beneath $1 read-only (a recursive bind keeps submounts writable).
ro_tree() {
    awk -v p="$1" '$5 == p || index($5, p "/") == 1 { print $5 }' /proc/self/mountinfo |
        while read -r m; do mount -o remount,bind,ro "$m"; done
}

mount -t tmpfs -o mode=0755 soundness-root "$ROOT"
for d in usr etc; do
    mkdir "$ROOT/$d"
    mount --rbind "/$d" "$ROOT/$d"
    ro_tree "$ROOT/$d"
done
# Merged-/usr systems have symlinks here; others have directories.
for d in bin sbin lib lib32 lib64 libx32; do
    if [ -L "/$d" ]; then
        ln -s "$(readlink "/$d")" "$ROOT/$d"
    elif [ -d "/$d" ]; then
        mkdir "$ROOT/$d"
        mount --rbind "/$d" "$ROOT/$d"
        ro_tree "$ROOT/$d"
    fi
done

mkdir -p "$ROOT/proc" "$ROOT/dev" "$ROOT/tmp" "$ROOT/var/tmp" "$ROOT/home" "$ROOT/run"
# A proc of the new PID namespace; where the host refuses that (a masked /proc), the
# host's, read-only.
if mount -t proc proc "$ROOT/proc" 2>/dev/null; then
    for k in sys sysrq-trigger irq bus fs; do
        if [ -e "$ROOT/proc/$k" ]; then
            mount --bind "$ROOT/proc/$k" "$ROOT/proc/$k"
            mount -o remount,bind,ro "$ROOT/proc/$k"
        fi
    done
else
    mount --rbind /proc "$ROOT/proc"
    ro_tree "$ROOT/proc"
fi

mount -t tmpfs -o mode=0755 soundness-dev "$ROOT/dev"
for n in null zero full random urandom tty; do
    touch "$ROOT/dev/$n"
    mount --bind "/dev/$n" "$ROOT/dev/$n"
done
ln -s /proc/self/fd "$ROOT/dev/fd"
ln -s /proc/self/fd/0 "$ROOT/dev/stdin"
ln -s /proc/self/fd/1 "$ROOT/dev/stdout"
ln -s /proc/self/fd/2 "$ROOT/dev/stderr"
mkdir "$ROOT/dev/shm"
mount -t tmpfs -o mode=1777 soundness-shm "$ROOT/dev/shm"
mount -t tmpfs -o mode=1777 soundness-tmp "$ROOT/tmp"
mount -t tmpfs -o mode=1777 soundness-vartmp "$ROOT/var/tmp"
# The user's passwd entry names the decoy home, as a real user's names theirs.
mount --bind "$SEED/etc/passwd" "$ROOT/etc/passwd"
mount -t tmpfs -o mode=0755 soundness-home "$ROOT/home"
cp -a "$SEED/home/." "$ROOT/home/"
mount -o remount,bind,ro "$ROOT"

status=0
strace -f -qq -y -s 4096 --seccomp-bpf -e signal=none \
    -e trace=getdents64,getdents,execve,execveat,open,openat,openat2,creat,unlink,unlinkat,rename,renameat,renameat2,link,linkat,symlink,symlinkat,mkdir,mkdirat,rmdir,truncate,chmod,fchmodat,chown,lchown,fchownat,utimes,utimensat,mknod,mknodat,connect,sendto,sendmsg,sendmmsg,chdir,fchdir,clone,clone3,fork,vfork \
    -o "$OUT/trace" -- \
    chroot "$ROOT" /usr/bin/env -i -C /home/user/proj \
    HOME=/home/user USER=user LOGNAME=user SHELL=/bin/bash LANG=C.UTF-8 \
    PATH=/usr/local/bin:/usr/bin:/bin \
    /bin/bash -c "$TEXT" </dev/null || status=$?
echo "$status" >"$OUT/status"
(cd "$ROOT" && find home tmp var/tmp dev/shm -xdev -printf '%y /%p\n') >"$OUT/after" 2>/dev/null || true
