# Sourced by the benchmark scripts: serves a directory with nginx on 127.0.0.1.
# start_nginx WORK ROOT PORT [SERVER_DIRECTIVES]: writes WORK/nginx.conf (pid and error log
# in WORK), starts nginx serving ROOT on 127.0.0.1:PORT, and stops it when the script exits
# (add cleanup of your own with `on_exit COMMAND`). Installs nginx-light when missing.
command -v nginx >/dev/null || apt-get install -y --no-install-recommends nginx-light >/dev/null \
    || { apt-get update >/dev/null && apt-get install -y --no-install-recommends nginx-light >/dev/null; }

# on_exit and work_dir (last registered first: nginx is stopped before its directory is
# removed).
source scripts/lib/workdir.sh

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

# serve_text_site WORK HOSTS PAGES PORT: installs the documentation its text comes from
# (scripts/quality-deps.sh) and generates the text-rich site (crates/quality's text_site
# example, built by the caller) under WORK/site, HOSTS hosts of PAGES pages, serves
# host h on 127.0.1.(h+1):PORT with two nginx workers, and writes WORK/seeds.txt (each host's
# first page). An address per host, not a port: wget2 keeps one directory per host name.
serve_text_site() {
    local work="$1" hosts="$2" pages="$3" port="$4" h addr servers=""
    # Its sentences are python3.11-doc's: installed with the other documentation packages.
    ./scripts/quality-deps.sh
    target/release/examples/text_site "$work/site" "$hosts" "$pages"
    chmod -R a+rX "$work"
    : > "$work/seeds.txt"
    for ((h = 0; h < hosts; h++)); do
        addr="127.0.1.$((h + 1))"
        servers+="server { listen $addr:$port; root $work/site/h$h; } "
        echo "http://$addr:$port/p/1.html" >> "$work/seeds.txt"
    done
    start_nginx_servers "$work" 2 "$servers"
}
