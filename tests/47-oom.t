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

# ---- the commands ---------------------------------------------------------------

# The reports, the same way: an allocation of the nytp binary fails (each,
# or one in seven where there are many), and the command either writes what it
# writes with nothing failing, byte for byte, or fails with one line that
# says so and leaves no output file: never a report with a part left out,
# never a crash.
my @profiles;
for my $name (qw(a b)) {
    ($st, $out, $err) = run_with(OOM_AT => 0);
    is $st, 0, "profile $name for the commands" or diag $err;
    rename "$dir/oom.out", "$dir/$name.out" or die "rename: $!";
    push @profiles, "$dir/$name.out";
}
my ($pa, $pb) = @profiles;
# A profile whose call tree spans batches (libformat/calltree.c puts
# returns in 8,192 at a time): outer's frame is open across their ends,
# then closed by a later batch, so the call tree's open-frame lists grow
# and merge too.
my $batches = "$dir/batches.pl";
open $fh, '>', $batches or die "$batches: $!";
print $fh <<'PERL';
sub leaf { 1 }
sub mid { leaf() for 1 .. 3 }
sub outer { mid() for 1 .. 3000 }
outer() for 1 .. 2;
PERL
close $fh;
{
    local $ENV{NYTPROF} = "file=$dir/batches.out";
    ($st, $out, $err) = run_cmd([$^X, "-I$inc", '-d:NYTP', $batches], cwd => $dir);
}
is $st, 0, 'a profile of 24,002 returns for the call tree' or diag $err;
my $pc = "$dir/batches.out";
sub nytp_with {
    my ($env, @args) = @_;
    local @ENV{ keys %$env } = values %$env;
    local $ENV{OOM_OBJ} = '/build/nytp';
    local $ENV{LD_PRELOAD} = $shim;
    return run_cmd([$nytp, @args], cwd => $dir);
}
my $o = "$dir/report.out";
# a Devel::DProf file, for dprof-convert
my ($tmon) = sort glob(repo() . '/testdata/dprof/*.tmon');
# What -o names, as one string: a file's bytes, or a directory's files
# and their bytes (html, csv); undef if there is none.
sub written {
    return undef unless -e $o;
    return slurp($o) unless -d $o;
    opendir my $dh, $o or return undef;
    return join '', map { "== $_\n" . slurp("$o/$_") } sort grep { !/^\./ } readdir $dh;
}
sub clear { system('rm', '-rf', $o) if -e $o }
for my $cmd (['top', $pa], ['top', '--json', $pa], ['dump', '--data', $pa], ['flame', '--svg', $pa, '-o', $o],
    ['pprof', $pa, '-o', $o], ['calls', $pa], ['diff', $pa, $pb], ['html', $pa, '-o', $o],
    ['csv', $pa, '-o', $o], ['dprof-convert', $tmon, '-o', $o], ['calls', $pc]) {
    my $label = "nytp $cmd->[0]" . ($cmd->[1] =~ /^-/ ? " $cmd->[1]" : '');
    # html writes its pages on threads: two pages may each fail, one line each
    my $pages = $cmd->[0] eq 'html';
    clear();
    my ($rst, $want, $rerr) = nytp_with({ OOM_COUNT => 1 }, @$cmd);
    my $want_file = written();
    my ($total) = $rerr =~ /^nytp-oom: allocations (\d+)$/m;
    ok $rst == 0 && $total, "$label: runs, making " . ($total // 0) . ' allocations' or diag $rerr;
    my %fails;
    # all of them where there are few
    my $step = ($total // 0) <= 100 ? 1 : 7;
    for (my $n = 1; $n <= ($total // 0); $n += $step) {
        clear();
        my ($cst, $got, $cerr) = nytp_with({ OOM_AT => $n }, @$cmd);
        my @lines = grep { !/^nytp-oom: / } split /\n/, $cerr;
        my $why;
        if ($cst > 128 && $cst < 128 + 32) {
            $why = 'killed by signal ' . ($cst - 128);
        } elsif ($cst == 0) {
            $why = 'exit 0 with other output'
                if $got ne $want || (written() // '') ne ($want_file // '');
        } else {
            $why = "exit $cst with " . scalar(@lines) . ' lines on stderr'
                unless (@lines == 1 || ($pages && @lines == 2))
                && !grep { !/out of memory|Cannot allocate memory/ } @lines;
            $why = 'exit ' . $cst . ', output left' if -e $o;
        }
        $fails{$n} = $why . ($cerr =~ /(\S[^\n]*)\n?\z/ ? ": $1" : '') if $why;
    }
    is_deeply \%fails, {}, "$label: " . ($step == 1 ? 'each' : 'every 7th') . " of its allocations failing: the whole output, or one line and none"
        or diag explain \%fails;
}

sub slurp {
    open my $fh, '<:raw', shift or return '';
    local $/;
    return <$fh>;
}

done_testing;
