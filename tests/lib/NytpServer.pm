package NytpServer;
# A real server for the tests: Debian's starman under 'nytp run', on a
# free port of 127.0.0.1, loaded by wrk (bounded in time), stopped with
# signals as service managers stop it.
use strict;
use warnings;
use Exporter 'import';
use IO::Socket::INET;
use POSIX ();
use Time::HiRes qw(time sleep);
use NytpTest;

our @EXPORT = qw(free_port start_server wait_ready server_pids load_server stop_server
    children_of process_gone profiles_of);

sub free_port {
    my $s = IO::Socket::INET->new(Listen => 1, LocalAddr => '127.0.0.1', LocalPort => 0, ReuseAddr => 1)
        or die "no free port: $!";
    my $port = $s->sockport;
    close $s;
    return $port;
}

# start_server(dir => D, app => PSGI, workers => N, nytprof => OPTS,
# starman => [ARGS], perl_inc => [DIRS]) -> { pid (nytp run), port, err,
# profile }.  Extra profiler options for every server of a test run come
# from NYTP_SERVER_NYTPROF (e.g. sample=1000 or rotate=1), so that the same
# checks run on sampled or rotated profiles.
sub start_server {
    my %o = @_;
    my $port = free_port();
    my $profile = "$o{dir}/st.out";
    my $opts = join ':', grep { defined && length } $o{nytprof}, $ENV{NYTP_SERVER_NYTPROF};
    my @cmd = (nytp(), 'run', '-o', $profile, ($opts ? "--nytprof=$opts" : ()),
        (map { "-I$_" } @{ $o{perl_inc} || [] }), '--', '/usr/bin/starman',
        '--workers', $o{workers} // 2, '--listen', "127.0.0.1:$port", @{ $o{starman} || [] }, $o{app});
    my $err = "$o{dir}/server.err";
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        open STDIN, '<', '/dev/null' or die;
        open STDOUT, '>', "$o{dir}/server.out" or die;
        open STDERR, '>', $err or die;
        exec @cmd or die "exec: $!";
    }
    my $srv = { pid => $pid, port => $port, err => $err, profile => $profile, dir => $o{dir} };
    wait_ready($srv) or die "the server did not start:\n" . (slurp_file($err) // '');
    return $srv;
}

# One request; the response's status line and body, or undef.
sub get {
    my ($port, $path, @headers) = @_;
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port, Timeout => 5) or return;
    my $h = join '', map { "$_\r\n" } @headers;
    print $s "GET $path HTTP/1.0\r\nHost: 127.0.0.1\r\n$h\r\n";
    local $/;
    my $r = <$s>;
    return $r;
}

sub wait_ready {
    my ($srv) = @_;
    my $until = time + 60;
    while (time < $until) {
        return 1 if (get($srv->{port}, '/ready') // '') =~ m{^HTTP/1\.\d 200};
        return 0 if waitpid($srv->{pid}, POSIX::WNOHANG()) == $srv->{pid};
        sleep 0.1;
    }
    return 0;
}

# The children of a process (from /proc: no dependence on procps).
sub children_of {
    my ($ppid) = @_;
    my @kids;
    for my $stat (glob '/proc/[0-9]*/stat') {
        my $s = slurp_file($stat) // next;
        next unless $s =~ /\)\s+\S+\s+(\d+)/;
        push @kids, ($stat =~ m{/proc/(\d+)/})[0] if $1 == $ppid;
    }
    return sort { $a <=> $b } @kids;
}

# (perl master, workers) of a server started by start_server
sub server_pids {
    my ($srv) = @_;
    my ($master) = children_of($srv->{pid});
    return ($master, $master ? children_of($master) : ());
}

sub process_gone {
    my ($pid) = @_;
    return 1 unless kill 0, $pid;
    my $s = slurp_file("/proc/$pid/stat") // return 1;
    return $s =~ /\) [ZX] /;
}

# wrk on 127.0.0.1 for SECS seconds (whole seconds: wrk takes no
# fractions): (requests per second, requests).
# A wrk still running after 'start' returns its pid instead (background).
sub load_server {
    my ($srv, %o) = @_;
    my $secs = $o{secs} // 1;
    my @cmd = ('wrk', '-t', $o{threads} // 2, '-c', $o{conns} // 4, '-d', "${secs}s",
        "http://127.0.0.1:$srv->{port}/");
    my $out = "$srv->{dir}/wrk." . time . '.out';
    my $pid = fork // die;
    if (!$pid) {
        open STDOUT, '>', $out or die;
        open STDERR, '>&', \*STDOUT or die;
        exec @cmd or die "exec wrk: $!";
    }
    return { pid => $pid, out => $out } if $o{background};
    waitpid $pid, 0;
    return wrk_result($out);
}

sub wrk_result {
    my ($out) = @_;
    my $t = slurp_file($out) // '';
    my ($rps) = $t =~ /^Requests\/sec:\s+([\d.]+)/m;
    my ($n) = $t =~ /^\s*(\d+) requests in/m;
    return ($rps // 0, $n // 0);
}

# Stop: how => 'nytp' (TERM to nytp run, as a service manager stopping its
# main process), 'each' (TERM to the master and to every worker, as one
# that signals every process of the service, apart from nytp run), or a
# code ref.  Waits up to 60 s for nytp run; returns (status, stderr).
sub stop_server {
    my ($srv, $how) = @_;
    my ($master, @workers) = server_pids($srv);
    if (ref $how) {
        $how->($srv, $master, @workers);
    } elsif ($how eq 'nytp') {
        kill 'TERM', $srv->{pid};
    } elsif ($how eq 'each') {
        kill 'TERM', $master, @workers;
    } else {
        die "stop_server: how '$how'?";
    }
    my $until = time + 60;
    my $st;
    while (time < $until) {
        if (waitpid($srv->{pid}, POSIX::WNOHANG()) == $srv->{pid}) {
            $st = $?;
            last;
        }
        sleep 0.05;
    }
    if (!defined $st) { # never leave a server behind
        kill 'KILL', $_ for grep { $_ } $srv->{pid}, $master, @workers;
        waitpid $srv->{pid}, 0;
        $st = $?;
    }
    my $status = $st & 127 ? 128 + ($st & 127) : $st >> 8;
    return ($status, slurp_file($srv->{err}) // '');
}

# The profiles a server wrote: FILE and FILE.* (workers, segments).
sub profiles_of {
    my ($srv) = @_;
    return grep { -f } $srv->{profile}, glob("$srv->{profile}.*");
}

1;
