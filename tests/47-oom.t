#!/usr/bin/perl
# Devel::NYTP when memory runs out: each allocation that the profiler's
# own code makes (NYTP.so, libnytpformat inside it) fails in turn, one per
# run, by a preloaded library (tests/lib/oom-shim.c) while perl's own
# never do.  At every one the program must not crash: the profiler may
# stop it ("Devel::NYTP: out of memory"), or leave a file out, but a
# profile it leaves is one that nytp and Devel::NYTProf's reader both
# read whole, its file ids declared without a gap (the reader stops at
# one: a file id taken, then not written, when the name of a string
# eval's file could not be copied).
use strict;
use warnings;
use Test::More;
use Config;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;

my $nytp = nytp();
my $inc = repo() . '/build/perl';
my $dir = scratch_dir();
delete $ENV{NYTPROF};

my $cc = $ENV{CC} || $Config{cc} || 'cc';
my $shim = "$dir/oom-shim.so";
my ($st, $out, $err) = run_cmd([$cc, '-std=c11', '-O1', '-shared', '-fPIC', '-o', $shim,
    repo() . '/tests/lib/oom-shim.c', '-ldl']);
is $st, 0, 'the allocation-failing library builds' or diag $err;

# String evals (each a file of its own), subs, a slow op.
my $prog = "$dir/oom.pl";
open my $fh, '>', $prog or die "$prog: $!";
print $fh <<'PERL';
my $s = 0;
for my $i (1 .. 5) { $s += eval "\$i * 2" }
sub f { return $_[0] + 1 }
$s += f($_) for 1 .. 3;
print "$s\n";
PERL
close $fh;

sub run_with {
    my (%env) = @_;
    unlink glob "$dir/oom.out*";
    local @ENV{ keys %env } = values %env;
    local $ENV{LD_PRELOAD} = $shim;
    local $ENV{NYTPROF} = "file=$dir/oom.out";
    return run_cmd([$^X, "-I$inc", '-d:NYTP', $prog], cwd => $dir);
}

($st, $out, $err) = run_with(OOM_COUNT => 1);
is $st, 0, 'with nothing failing the program runs' or diag $err;
is $out, "39\n", 'and prints what it prints';
my ($count) = $err =~ /^nytp-oom: allocations (\d+)$/m;
ok $count && $count > 10, "the profiler allocates (" . ($count // 0) . " times)";

my %bad;
for my $n (1 .. ($count // 0)) {
    ($st, $out, $err) = run_with(OOM_AT => $n);
    my $failed = $err =~ /^nytp-oom: failed allocation \Q$n\E$/m;
    my $why = '';
    $why .= "not failed; " unless $failed;
    # (run_cmd: 128 + N for signal N; a die exits 255)
    $why .= "killed by signal " . ($st - 128) . "; " if $st > 128 && $st < 128 + 32;
    $why .= "perl: $1; " if $err =~ /(panic[^\n]*|Segmentation[^\n]*|Out of memory![^\n]*)/;
    for my $file (glob "$dir/oom.out*") {
        my ($dst, $dump, $derr) = run_cmd([$nytp, 'dump', '--strict', $file]);
        $why .= "nytp dump --strict: $derr; " if $dst;
        my @ids = $dump =~ /^NEW_FID\t(\d+)\t/mg;
        my @want = 1 .. scalar @ids;
        $why .= "file ids @ids; " unless "@ids" eq "@want";
        my ($ost, undef, $oerr) = run_cmd([$^X, '-MDevel::NYTProf::Data', '-e',
            'Devel::NYTProf::Data->new({ filename => shift, quiet => 1 })->all_fileinfos', $file]);
        $why .= "Devel::NYTProf::Data: $oerr; " if $ost;
    }
    $bad{$n} = $why if $why;
}
is_deeply \%bad, {}, "each of the $count allocations failing in turn: no crash, every profile left reads whole"
    or diag explain \%bad;

done_testing;
