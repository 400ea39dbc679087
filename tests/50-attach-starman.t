#!/usr/bin/perl
# nytp attach --children and nytp stack --children on a real preforking
# server: Debian's starman with two workers, started plainly (not under
# nytp), loaded by wrk on 127.0.0.1 while nytp attaches to its master.
# One worker is killed with TERM during the attach: starman forks a new
# one, which must get its own profile.  The app spends its time in a
# known sub, which nytp top must rank first in the workers' profiles.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;
use NytpServer qw(free_port children_of);
use JSON::PP;
use POSIX ();
use Time::HiRes qw(sleep time);

need(-x '/usr/bin/starman', 'starman (Debian package starman)');
need(scalar(grep { -x "$_/wrk" } split /:/, $ENV{PATH}), 'wrk (Debian package wrk)');

my $nytp = nytp();
my $dir = scratch_dir() . '/starman';
mkdir $dir or die "$dir: $!";

# Every process started here leads a process group of its own, stopped
# whole at the end, also when a test dies half way: TERM first, so that
# starman's master reaps its workers (this machine's init leaves zombies),
# then KILL for whatever is left.
my @groups;
END {
    local $?;
    my @all = @groups;
    kill 'TERM', -$_ for @all;
    my $until = time + 5;
    while (@groups && time < $until) {
        @groups = grep { waitpid($_, POSIX::WNOHANG()) == 0 } @groups;
        sleep 0.05 if @groups;
    }
    kill 'KILL', -$_ for @all;
    waitpid $_, 0 for @groups;
}

sub spawn {
    my ($out, @cmd) = @_;
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        POSIX::setpgid(0, 0);
        open STDIN, '<', '/dev/null' or die;
        open STDOUT, '>', $out or die;
        open STDERR, '>&', \*STDOUT or die;
        exec @cmd or die "exec: $!";
    }
    POSIX::setpgid($pid, $pid);    # as the child does: no race with the END block
    push @groups, $pid;
    return $pid;
}

my $app = "$dir/app.psgi";
open my $fh, '>', $app or die "$app: $!";
print $fh <<'PSGI';
sub heavy_work { my $x = 0; $x += $_ * 2 for 1 .. 300_000; $x }
my $app = sub {
    my $r = heavy_work();
    return [200, ['Content-Type' => 'text/plain'], ["$r\n"]];
};
PSGI
close $fh;

my $port = free_port();
my $master = spawn("$dir/server.out", '/usr/bin/starman', '--workers', 2, '--listen', "127.0.0.1:$port", $app);
my $until = time + 30;
sleep 0.1 until (NytpServer::get($port, '/') // '') =~ m{^HTTP/1\.\d 200} || time > $until;
my @workers;
for (1 .. 100) { @workers = children_of($master); last if @workers == 2; sleep 0.05 }
is scalar(@workers), 2, "starman ($master) runs with two workers (@workers)"
    or BAIL_OUT('no server: ' . (slurp_file("$dir/server.out") // ''));

# ---- nytp stack --children: the master and the workers ----------------------

{
    my ($st, $out, $err) = run_cmd([$nytp, 'stack', '--json', '--children', $master]);
    is $st, 0, 'stack --children: exit 0' or diag $err;
    my @procs = map { eval { decode_json($_) } } split /\n/, $out;
    is scalar(@procs), scalar(split /\n/, $out), 'stack --children --json: a JSON document a line';
    my @pids = map { $_->{pid} } @procs;
    is_deeply [sort { $a <=> $b } @pids], [sort { $a <=> $b } $master, @workers],
        'stack --children: the master and both workers'
        or diag $out;
    is $pids[0], $master, '... the master first, as given (nytp-stack(1))';
    my ($st2, $text) = run_cmd([$nytp, 'stack', '--children', $master]);
    is $st2, 0, 'stack --children (text): exit 0';
    like $text, qr/^Process \Q$_\E\b/m, "... names process $_" for $master, @workers;
}

# ---- nytp attach --children under load; a worker replaced meanwhile ----------

my $prof = "$dir/w.out";
# (wrk's load outlasts the attach a little; the worker that replaces the
# one killed is found at the scan a second in)
my $wrk = spawn("$dir/wrk.out", 'wrk', '-t', 1, '-c', 2, '-d', '2s', "http://127.0.0.1:$port/");
sleep 0.3;
my $attach = spawn("$dir/attach.err", $nytp, 'attach', '--children', '--duration=1.5', '-o', $prof, $master);
sleep 0.7;
my $victim = $workers[0];
kill 'TERM', $victim;
my @now;
for (1 .. 100) {
    @now = children_of($master);
    last if @now == 2 && !grep { $_ == $victim } @now;
    sleep 0.02;
}
my ($fresh) = grep { my $p = $_; !grep { $_ == $p } @workers } @now;
ok $fresh, "starman replaced worker $victim by " . ($fresh // 'none');
waitpid $attach, 0;
my $ast = $?;
@groups = grep { $_ != $attach } @groups;
is $ast, 0, 'attach --children: exit 0' or diag slurp_file("$dir/attach.err");
waitpid $wrk, 0;
@groups = grep { $_ != $wrk } @groups;
my (undef, $requests) = NytpServer::wrk_result("$dir/wrk.out");
cmp_ok $requests, '>', 0, "wrk's requests were answered ($requests)";

ok -s "$prof.$master", "the master's profile: $prof.$master";
for my $w (@workers[1 .. $#workers]) {
    ok -s "$prof.$w", "worker $w: its own profile";
    my ($st, $out, $err) = run_cmd([$nytp, 'top', '--json', "$prof.$w"]);
    is $st, 0, "nytp top reads the profile of worker $w" or diag $err;
    my $j = eval { decode_json($out) } // {};
    my @subs = @{ $j->{subs} // [] };
    my ($first) = sort { ($b->{excl} // 0) <=> ($a->{excl} // 0) } @subs;
    # Plack compiles the .psgi in a package of its own, named after its path
    like $first && $first->{name}, qr/\APlack::Sandbox::\w+::heavy_work\z/,
        "nytp top ranks the app's heavy sub first in worker $w"
        or diag $out;
}
ok -s "$prof.$victim", "the killed worker $victim: its profile, up to its exit";
ok $fresh && -s "$prof.$fresh", 'the worker forked during the attach: its own profile'
    if $fresh;
ok !-e $prof, 'no FILE itself';

done_testing;
