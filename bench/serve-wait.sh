# Sourced by the bench scripts that start `cordon serve` in the background: wait until
# its socket exists ($1), or print its log ($2) and fail after 10 s.
wait_for_socket() {
    _i=0
    while [ ! -S "$1" ]; do
        _i=$((_i + 1)); [ "$_i" -lt 200 ] || { cat "$2"; exit 1; }
        sleep 0.05
    done
}
