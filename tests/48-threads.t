#!/usr/bin/perl
# The profiler's own threads may change nothing the program sees: after a
# change of ids every thread of the process has the new ids (a thread left
# behind as root shares the memory of a program that dropped root), and a
# system call that wants a single-threaded process (unshare of a user
# namespace) works in the mode without threads, traced and sampled.
use strict;
use warnings;
use Test::More;
use Config;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;

my $nytp = nytp();
my $dir = scratch_dir();
delete $ENV{NYTPROF};

# ---- item 1: a program that drops root ----------------------------------------

SKIP: {
    skip 'not root: the program cannot drop root', 6 if $> != 0;
    my ($uid, $gid) = (getpwnam('nobody'))[2, 3];
    skip 'no user nobody', 6 unless defined $uid;
    chmod 0755, $dir; # the program, as nobody, reads its own script
    # busy before and after the drop, so that the sampler is running
    # either side of it; then every thread's ids, from the kernel.
    my $drop = scratch_script('drop.pl', <<"PERL");
use POSIX ();
use Time::HiRes qw(time);
sub busy { my \$end = time + \$_[0]; my \$n = 0; while (time < \$end) { \$n++ } \$n }
busy(0.1);
POSIX::setgid($gid) or die "setgid: \$!";
POSIX::setuid($uid) or die "setuid: \$!";
busy(0.1);
for my \$t (glob '/proc/self/task/*') {
    open my \$fh, '<', "\$t/status" or next;
    my \%s = map { /^(\\w+):\\s*(.*)/ ? (\$1, \$2) : () } <\$fh>;
    my (\$tid) = \$t =~ m{(\\d+)\$};
    print "\$tid Uid=\$s{Uid} Gid=\$s{Gid}\\n";
}
PERL
    chmod 0644, $drop;
    for my $mode ('', 'sample=1000', 'sample=100') {
        my $name = $mode || 'traced';
        my ($st, $out, $err) = nytp_profile('drop', $drop, $mode);
        is $st, 0, "drop ($name): ran" or diag $err;
        my @bad = grep { !/^\d+ Uid=(?:$uid\s+){3}$uid Gid=(?:$gid\s+){3}$gid$/ } split /\n/, $out;
        ok $out ne '' && !@bad,
            "drop ($name): every thread has the new ids"
            or diag "threads with other ids:\n", join "\n", @bad;
    }
}

# ---- item 6: unshare(CLONE_NEWUSER) wants a single-threaded process ----------

my %SYS_unshare = (x86_64 => 272, aarch64 => 97, i386 => 310, i686 => 310);
my ($arch) = $Config{archname} =~ /^([^-]+)/;
SKIP: {
    skip "no unshare system call number for $arch", 4 unless $SYS_unshare{$arch};
    my $prog = scratch_script('unshare.pl', <<"PERL");
use Time::HiRes qw(time);
my \$end = time + 0.05; my \$n = 0; while (time < \$end) { \$n++ }
my \$r = syscall($SYS_unshare{$arch}, 0x10000000); # CLONE_NEWUSER
print \$r == 0 ? "unshared\\n" : "unshare: \$!\\n";
PERL
    my ($st, $out) = run_cmd([$^X, $prog], cwd => $dir);
    skip "the kernel refuses a user namespace even without the profiler: $out", 4
        unless $out eq "unshared\n";
    for my $mode ('threads=0', 'sample=1000', 'sample=1000:threads=0') {
        my ($pst, $pout, $perr, $file) = nytp_profile('unshare', $prog, $mode);
        is $pout, "unshared\n", "unshare(CLONE_NEWUSER) under the profiler, $mode"
            or diag $perr;
        if ($mode eq 'threads=0') {
            my ($dst, undef, $derr) = run_cmd([$nytp, 'dump', '--strict', $file]);
            is $dst, 0, 'threads=0: the profile reads whole' or diag $derr;
        }
    }
}

# ---- the timer's signal is the program's business -----------------------------

# A program that sets every signal back to its default (daemons do) must
# not die of the timer's signal; one that takes the signal over for
# itself stops the sampling, with a word on stderr (its handler sees the
# few signals sent before the next sample finds it out: with the timer's
# signals gone to the program, that is the next wait or xsub during which
# the coarse clock moves; 0 to 4 of them in runs here at load 10).
my $busy = <<'PERL';
use Time::HiRes qw(time);
sub busy { my $end = time + $_[0]; my $n = 0; while (time < $end) { $n++ } $n }
busy(0.05);
PERL
my $dflt = scratch_script('sigdefault.pl', $busy . <<'PERL');
$SIG{$_} = 'DEFAULT' for keys %SIG;
busy(0.3);
print "alive\n";
PERL
my ($sst, $sout, $serr) = nytp_profile('sigs', $dflt, 'sample=1000');
is $sst, 0, 'all of %SIG set to DEFAULT: the program lives' or diag $serr;
is $sout, "alive\n", '... and goes on';
my $own = scratch_script('sigown.pl', $busy . <<'PERL');
my $n = 0;
$SIG{URG} = sub { $n++ };
busy(0.3);
print "own $n\n";
PERL
($sst, $sout, $serr) = nytp_profile('sigs', $own, 'sample=1000');
is $sst, 0, 'a handler of its own on SIGURG: the program runs' or diag $serr;
my ($n) = $sout =~ /^own (\d+)$/m;
ok defined $n && $n <= 10, 'its handler sees no more than a few signals: ' . ($n // '?');
like $serr, qr/set its own action for signal \d+, which the sampling timer used/, 'the profiler says it stops sampling';

done_testing;
