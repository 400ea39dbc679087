#!/usr/bin/perl
# A real server stopped the normal way (issue 22): Debian's starman with
# two workers under 'nytp run', loaded by wrk on 127.0.0.1, stopped with
# TERM.  Every worker and the master leave one complete profile with the
# application's subs: when TERM goes to nytp run (a service manager
# stopping the main process), when it goes to every process of the
# server (one that signals them all: each worker is then sent TERM again
# by its master while it exits, which used to cut its profile short with
# no subs at all), with workers that end and are replaced
# (--max-requests), and beside a worker killed with SIGKILL (its profile
# reads up to the cut); sampled at 1000 Hz in one-second segments, with a
# worker killed after two seconds (its closed segments complete, the hot
# sub on top of nytp top).  Extra profiler options for every server:
# NYTP_SERVER_NYTPROF (sample=..., rotate=...).
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;
use NytpServer;
use Time::HiRes qw(sleep time);
use JSON::PP ();

need(-x '/usr/bin/starman', 'starman (Debian package starman)');
need(scalar(grep { -x "$_/wrk" } split /:/, $ENV{PATH}), 'wrk (Debian package wrk)');
delete $ENV{NYTPROF};

my $nytp = nytp();
my $app = repo() . '/tests/programs/service.psgi';
local $ENV{NYTP_SERVICE_SLOW_END} = 1;
local $ENV{NYTP_SERVICE_WORK} = 100;   # small profiles: the test stays short

# both workers past their first request (each compiles the application
# then), so that the load measures serving
sub warm {
    my ($srv) = @_;
    NytpServer::get($srv->{port}, '/warm') for 1 .. 6;
}

sub complete {
    my ($file) = @_;
    my ($st) = run_cmd([$nytp, 'dump', '--strict', $file]);
    return $st == 0;
}

# One read of a profile: (complete, { sub short name => calls }) from
# top --strict --json (a .psgi is compiled in a package of Plack's:
# Plack::Sandbox::..._2epsgi::hot_loop); a sub that was not called is
# looked for among the SUB_INFO chunks, with 0 calls.
sub app_subs {
    my ($file) = @_;
    my ($st, $out) = run_cmd([$nytp, 'top', '--strict', '--json', '-n', '0', $file]);
    my $top = eval { JSON::PP->new->decode($out) } || { subs => [] };
    my %calls;
    for my $s (@{ $top->{subs} }) {
        next unless $s->{name} =~ /(?:\A|::)(?:main|Plack::Sandbox::\w+)::(\w+)\z/;
        $calls{$1} += $s->{calls};
    }
    if ($st == 0 && grep { !exists $calls{$_} } qw(handle hot_loop render)) {
        (undef, $out) = run_cmd([$nytp, 'dump', '--tags=SUB_INFO', $file]);
        $calls{$_} //= 0 for $out =~ /^SUB_INFO\t.*\t(?:main|Plack::Sandbox::\w+)::(\w+)$/mg;
    }
    return ($st == 0, \%calls);
}

# every profile of the server: complete, and the workers' with the app's subs
sub check_profiles {
    my ($srv, $label, %o) = @_;
    my @files = profiles_of($srv);
    my ($master) = grep { $_ eq $srv->{profile} } @files;
    ok $master, "$label: the master's profile is there";
    ok complete($master), "$label: the master's profile is complete";
    my @workers = grep { $_ ne $srv->{profile} && !$o{cut}{$_} } @files;
    ok @workers >= ($o{workers} // 2), "$label: a profile per worker (" . scalar(@workers) . ')';
    my %called;
    for my $f (@workers) {
        my ($ok, $c) = app_subs($f);
        ok $ok, "$label: $f is complete";
        ok exists $c->{hot_loop} && exists $c->{render} && exists $c->{handle},
            "$label: $f has the application's subs" or diag join ' ', sort keys %$c;
        $called{$_} += $c->{$_} // 0 for qw(handle hot_loop render);
    }
    # a request a worker was serving when it was stopped counts in the
    # subs it entered, not in those it did not reach: one per worker at most
    my $n = @workers;
    ok $called{handle} && $called{hot_loop} <= $called{handle} && $called{render} <= $called{hot_loop}
        && $called{render} >= $called{handle} - $n,
        "$label: the workers' profiles have the requests' calls ($called{handle} handle, "
        . "$called{hot_loop} hot_loop, $called{render} render)";
    return $called{handle};
}

# 1. TERM to nytp run under load (a service manager stopping its main
# process); workers replaced every 100 requests; one worker killed with
# SIGKILL first: what it wrote reads up to the cut (with rotation, its
# closed segments are complete)
{
    my $dir = scratch_dir() . '/term-nytp';
    mkdir $dir;
    my $srv = start_server(dir => $dir, app => $app, workers => 2, starman => ['--max-requests', 100]);
    warm($srv);
    my $wrk = load_server($srv, secs => 1, threads => 1, conns => 1, background => 1);
    sleep 0.3;
    my (undef, $victim) = server_pids($srv);
    ok $victim, "a worker to kill ($victim)";
    kill 'KILL', $victim;
    sleep 0.05 until process_gone($victim);
    # the master starts another worker; stopped before that one has set
    # its own TERM handler, it would ignore TERM (Net::Server's race, the
    # wider for profiling) and try to accept on the closed socket for 30 s
    my $until = time + 20;
    sleep 0.05 until time > $until || grep { defined && $_ != $victim } (server_pids($srv))[1 .. 2];
    sleep 0.4;
    my ($st, $err) = stop_server($srv, 'nytp');
    waitpid $wrk->{pid}, 0;
    is $st, 0, 'TERM to nytp run under load: exit 0, as the master exits' or diag $err;
    like $err, qr/profile written to \S+st\.out \(complete\)$/m, 'nytp run names the master\'s profile';
    unlike $err, qr/still being written/, 'nytp run waited for every worker';

    my $seg = sub { ($_[0] =~ /\.\Q$victim\E(?:\.s(\d+))?$/)[0] // 0 };
    my @segs = sort { $seg->($a) <=> $seg->($b) } grep { /\.\Q$victim\E(?:\.s\d+)?$/ } profiles_of($srv);
    ok @segs, 'the killed worker left its profile';
    my $last = pop @segs;
    ok complete($_), "a closed segment of the killed worker is complete: $_" for @segs;
    my ($rst, undef, $rerr) = run_cmd([$nytp, 'top', $last]);
    is $rst, 0, 'the killed worker\'s profile reads up to the cut';
    like $rerr, qr/truncated|cut short/, '... and says it was cut short';

    my $handled = check_profiles($srv, 'TERM to nytp run', workers => 2, cut => { $last => 1 });
    my (undef, $n) = NytpServer::wrk_result($wrk->{out});
    ok $handled > 0, "the workers' profiles hold the requests ($handled; wrk saw $n answered)";
    my ($other) = grep { $_ ne $last && $_ ne $srv->{profile} } profiles_of($srv);
    my (undef, $data) = run_cmd([$^X, '-MDevel::NYTProf::Data', '-e',
        'my $p = Devel::NYTProf::Data->new({ filename => shift, quiet => 1 }); print scalar keys %{ $p->subname_subinfo_map }',
        $other]);
    ok $data > 0, "Devel::NYTProf::Data reads a worker's profile ($data subs)";
}

# 2. TERM to the master and every worker at once (a manager that signals
# every process): each worker is sent TERM again by its master while it
# exits, which cut its profile short, without a single sub
{
    my $dir = scratch_dir() . '/term-each';
    mkdir $dir;
    my $srv = start_server(dir => $dir, app => $app, workers => 2);
    warm($srv);
    my $wrk = load_server($srv, secs => 1, threads => 1, conns => 1, background => 1);
    sleep 0.6;
    my ($st, $err) = stop_server($srv, 'each');
    waitpid $wrk->{pid}, 0;
    ok $st == 0 || $st == 143, "TERM to every process: the server stopped ($st)" or diag $err;
    my $handled = check_profiles($srv, 'TERM to every process', workers => 2);
    my (undef, $n) = NytpServer::wrk_result($wrk->{out});
    ok $handled >= $n, "the workers' profiles count every request wrk saw answered ($handled >= $n)";
}

# 3. Sampled and rotating (issue 22: a service profiled all the time): a
# segment a second; a worker killed with SIGKILL after two seconds of load
# keeps its closed segments, each complete; the others stop with TERM;
# the workers' sampled profiles put the application's hot sub on top and
# say their counts are unknown
{
    local $ENV{NYTP_SERVICE_WORK} = 20000;   # the hot sub dominates a request
    local $ENV{NYTP_SERVICE_SLOW_END} = 0;
    my $dir = scratch_dir() . '/sampled';
    mkdir $dir;
    my $srv = start_server(dir => $dir, app => $app, workers => 2, nytprof => 'sample=1000:rotate=1');
    warm($srv);
    my $wrk = load_server($srv, secs => 3, threads => 1, conns => 2, background => 1);
    sleep 2.3;
    my (undef, $victim, $other) = server_pids($srv);
    ok $victim && $other, "sampled: two workers ($victim, $other)";
    kill 'KILL', $victim;
    sleep 0.05 until process_gone($victim);
    waitpid $wrk->{pid}, 0;
    my ($st, $err) = stop_server($srv, 'nytp');
    is $st, 0, 'sampled: TERM to nytp run, exit 0' or diag $err;

    my $seg = sub { ($_[0] =~ /\.\Q$victim\E(?:\.s(\d+))?$/)[0] // 0 };
    my @killed = sort { $seg->($a) <=> $seg->($b) } grep { /\.\Q$victim\E(?:\.s\d+)?$/ } profiles_of($srv);
    my $cut = pop @killed;
    ok @killed >= 1, 'sampled: the killed worker closed segments before the kill (' . scalar(@killed) . ')';
    ok complete($_), "sampled: a closed segment of the killed worker is complete: $_" for @killed;
    my ($dst, $dout) = run_cmd([$^X, '-MDevel::NYTProf::Data', '-e',
        'for (@ARGV) { my $p = Devel::NYTProf::Data->new({ filename => $_, quiet => 1 }); print scalar(keys %{ $p->subname_subinfo_map }), "\n" }',
        @killed]);
    is $dst, 0, 'sampled: Devel::NYTProf::Data reads every closed segment of the killed worker';

    my @survivor = grep { /\.\Q$other\E(?:\.s\d+)?$/ } profiles_of($srv);
    ok @survivor >= 2, 'sampled: the other worker left segments (' . scalar(@survivor) . ')';
    ok complete($_), "sampled: the other worker's segment $_ is complete" for @survivor;
    my ($tst, $tout, $terr) = run_cmd([$nytp, 'top', '--strict', '--json', @survivor, @killed]);
    is $tst, 0, 'sampled: nytp top of the workers\' segments' or diag $terr;
    my $top = eval { JSON::PP->new->decode($tout) } || { subs => [] };
    # on the wall clock, a loaded machine (load 10 seen) charges the time
    # a worker waits for a CPU inside syswrite to CORE:syswrite, which can
    # then top the profile, rightly: the hot sub tops the subs of perl code
    my ($first) = grep { $_->{name} !~ /::CORE:/ } @{ $top->{subs} };
    $first //= {};
    like $first->{name} // '', qr/::hot_loop\z/, 'sampled: the hot sub tops the perl subs in nytp top'
        or diag $tout;
    ok exists $first->{calls} && !defined $first->{calls}, 'sampled: its count is unknown (null), not invented';
    my (undef, $text) = run_cmd([$nytp, 'top', @survivor]);
    like $text, qr/sampled at 1000 Hz/, 'sampled: top says the profile was sampled';
}

done_testing;
