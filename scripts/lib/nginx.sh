# Sourced by the benchmark scripts: serves a directory with nginx on 127.0.0.1.
# start_nginx WORK ROOT PORT [SERVER_DIRECTIVES]: writes WORK/nginx.conf (pid and error log
# in WORK), starts nginx serving ROOT on 127.0.0.1:PORT, and stops it when the script exits
# (add cleanup of your own with `on_exit COMMAND`). Installs nginx-light when missing.
command -v nginx >/dev/null || apt-get install -y --no-install-recommends nginx-light >/dev/null \
    || { apt-get update >/dev/null && apt-get install -y --no-install-recommends nginx-light >/dev/null; }

exit_commands=()
on_exit() { exit_commands+=("$1"); }
# Last registered first: nginx is stopped before its directory is removed.
run_exit_commands() {
    local i
    for ((i = ${#exit_commands[@]} - 1; i >= 0; i--)); do eval "${exit_commands[i]}" || true; done
}
trap run_exit_commands EXIT

start_nginx() {
    local work="$1" root="$2" port="$3" extra="${4:-}"
    start_nginx_servers "$work" 1 "server { listen 127.0.0.1:$port; root $root; disable_symlinks off; $extra }"
}

# start_nginx_servers WORK WORKERS SERVERS: the same with WORKERS worker processes and the
# given server blocks.
start_nginx_servers() {
    local work="$1" workers="$2" servers="$3"
    cat > "$work/nginx.conf" <<CONF
worker_processes $workers;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 1024; }
http {
    access_log off;
    types { text/html html; text/css css; image/png png; image/svg+xml svg; }
    default_type application/octet-stream;
    $servers
}
CONF
    nginx -c "$work/nginx.conf"
    on_exit "kill \$(cat '$work/nginx.pid' 2>/dev/null) 2>/dev/null"
    sleep 0.5
}
