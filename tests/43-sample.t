#!/usr/bin/perl
# Devel::NYTP's sampling mode (sample=HZ): times that match where the
# program spent its wall time, a file every reader opens (nytp's commands,
# Devel::NYTProf::Data, nytprofhtml) that says it was sampled, reports that
# show its counts as unknown, and a program that behaves as without the
# profiler (sleeps, signals, fork, exec, enable/disable).
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;
use JSON::PP;

my $nytp = nytp();
my $dir = scratch_dir();
delete $ENV{NYTPROF};

sub top_json {
    my ($file, @opt) = @_;
    my ($st, $out, $err) = run_cmd([$nytp, 'top', '--json', '-n', '0', @opt, $file]);
    is $st, 0, "top --json $file" or diag $err;
    return eval { decode_json($out) } // {};
}

# ---- accuracy: subs that hold the CPU for known shares of the wall time --------

# bench/workloads/shares.pl: subs that spin for 50, 30 and 20 % of the
# wall time, and print the shares they really took (a loaded machine
# stretches them): the truth the samples are held to.
my $shares = repo() . '/bench/workloads/shares.pl';
my ($st, $out, $err, $file) = nytp_profile('shares', $shares, 'sample=1000', 2);
is $st, 0, 'shares: profiled' or diag $err;
my %truth = $out =~ /^(\w+) ([\d.]+)$/mg;
my $top = top_json($file);
my %incl = map { $_->{name} => $_->{incl} } @{$top->{subs} || []};
my $sum = 0;
$sum += $incl{"main::$_"} // 0 for qw(fifty thirty twenty);
for my $s (qw(fifty thirty twenty)) {
    my $got = $sum ? 100 * ($incl{"main::$s"} // 0) / $sum : 0;
    ok abs($got - ($truth{$s} // -99)) <= 5,
        sprintf('%s: sampled inclusive share %.1f%%, measured %.1f%% (within 5 points)', $s, $got,
                $truth{$s} // -1);
}
my $samples = $top->{sampled}{samples} // 0;
ok $samples >= 200, "2 s at 1000 Hz: $samples samples (some hundreds even on a loaded machine)";
is $top->{sampled}{hz}, 1000, 'top --json: sampled at 1000 Hz';
ok abs(($top->{totals}{statements} // 0) - ($top->{totals}{profiler_duration} // 1))
        < 0.05 * ($top->{totals}{profiler_duration} // 1),
    'the line times add up to the time profiled';
is $top->{subs}[0]{calls}, undef, 'top --json: calls are null (unknown)';
is $top->{totals}{statements_executed}, undef, 'top --json: statements executed are null';

# ---- the file: an ordinary NYTProf file that says it was sampled ------------

($st, my $dump, $err) = run_cmd([$nytp, 'dump', '--strict', $file]);
is $st, 0, 'dump --strict reads it' or diag $err;
like $dump, qr/^ATTRIBUTE\tsample_hz\t1000$/m, 'attribute sample_hz';
my ($count) = $dump =~ /^ATTRIBUTE\tsample_count\t(\d+)$/m;
is $count, $samples, 'attribute sample_count: the samples top counts';
like $dump, qr/^SUB_RETURN\t/m, 'call events (SUB_RETURN) for the flame graph';
my @chunks = map { (split /\t/)[0] } split /\n/, $dump;
my ($lines, $bare) = (0, 0);
for my $i (0 .. $#chunks) {
    next unless $chunks[$i] eq 'TIME_LINE';
    $lines++;
    $bare++ if $i == 0 || $chunks[$i - 1] ne 'DISCOUNT';
}
ok $lines > 0, "$lines lines with time";
is $bare, 0, 'every TIME_LINE follows a DISCOUNT: time, and no statement counted';
unlike $dump, qr/^SRC_LINE\t/m, 'the source of files is not saved (it is on disk) unless savesrc=1';

# Devel::NYTProf's own readers open it without a word.
($st, $out, $err) = run_cmd([$^X, '-w', '-MDevel::NYTProf::Data', '-e',
    'my $p = Devel::NYTProf::Data->new({ filename => shift, quiet => 1 });
     my $s = $p->subinfo_of("main::fifty");
     printf "calls %d incl %.3f\n", $s->calls, $s->incl_time', $file]);
is $st, 0, 'Devel::NYTProf::Data reads it' or diag $err;
is $err, '', 'Devel::NYTProf::Data: no warning';
like $out, qr/^calls [1-9]\d* incl (\d+\.\d+)$/m, 'Devel::NYTProf::Data: a sub seen has a call count';
my ($dincl) = $out =~ /incl ([\d.]+)/;
ok abs(($dincl // 0) - ($incl{'main::fifty'} // -1)) < 0.01,
    'Devel::NYTProf::Data: the same inclusive time as nytp';
SKIP: {
    my $nytprofhtml = `sh -c 'command -v nytprofhtml'`;
    chomp $nytprofhtml;
    skip 'nytprofhtml (libdevel-nytprof-perl) is missing', 3
        if missing($nytprofhtml, 'nytprofhtml (libdevel-nytprof-perl)');
    ($st, $out, $err) = run_cmd([$nytprofhtml, '-f', $file, '-o', "$dir/nytprofhtml"]);
    is $st, 0, 'nytprofhtml makes its report' or diag $err;
    unlike $err, qr/warn|error|uninitiali[sz]ed|division|\bat \S+ line \d+/i, 'nytprofhtml: no warning'
        or diag $err;
    ok -s "$dir/nytprofhtml/index.html", 'nytprofhtml: index.html';
}

# ---- lines: only lines that ran ---------------------------------------------

# Every line a sample is charged to is one that ran (a line the tracing
# profiler counts): the time before the first statement and after the
# last (PL_compiling at line 0, no call on the stack: global destruction
# and what follows it) is no line's, as in a traced profile, not line 1
# of the file compiled last, here a comment; and the time of compiling a
# file is the 'use' line's, not that of the line being compiled when a
# constant is folded (a slow op, where a sample can be taken).
{
    my $prog = "$dir/lines-ran.pl";
    open my $fh, '>', $prog or die "$prog: $!";
    print $fh "# line 1: a comment, never run\n",
        "use lib '$dir';\nuse LinesRanMod;\n",
        "our \@keep;\n",
        "sub work { my \$n = 0; for my \$i (1 .. 3000) { \$n += \$i; push \@keep, [\$i] } \$n }\n",
        "my \$t = 0;\n",
        "\$t += work() for 1 .. 40;\n",
        "print \"\$t\\n\";\n";
    close $fh;
    # A module whose compiling takes some milliseconds, then folds a
    # pack of constants in a sub never called: the first place after the
    # timer's deadline where a sample is taken is that fold (a slow op),
    # while the compiler is at a line that never runs.
    open $fh, '>', "$dir/LinesRanMod.pm" or die "LinesRanMod.pm: $!";
    print $fh "package LinesRanMod;\n";
    print $fh "sub s$_ { my (\$x, \$y) = \@_; return [ map { \$_ * \$x + \$y } 1 .. $_ ] }\n" for 1 .. 3000;
    print $fh "sub never { return pack('N', 1) . pack('n', 2) }\n1;\n";
    close $fh;
    my %ran;
    for my $mode ('', 'sample=5000') {
        my ($pst, undef, $perr, $pfile) = nytp_profile('lines-ran', $prog, $mode);
        is $pst, 0, 'lines-ran.pl ' . ($mode || 'traced') or diag $perr;
        my (undef, $data) = run_cmd([$nytp, 'dump', '--data', $pfile]);
        my %names = map { /^fid_fileinfo\t(\d+)\t\[ (\S+) / ? ($1 => $2) : () } split /\n/, $data // '';
        my %lines = map { /^fid_line_time\t(\d+)\t(\d+)\t\[ / ? ("$names{$1}:$2" => 1) : () }
            split /\n/, $data // '';
        if (!$mode) {
            %ran = map { $_ => 1 } keys %lines;
            ok !$ran{"$prog:1"}, 'traced: line 1 (a comment) never ran';
            next;
        }
        ok keys %lines, 'sampled: some lines have time';
        my @never = sort grep { !$ran{$_} } keys %lines;
        is "@never", '', 'sampled: every line with time ran (none before the first statement or after the last, none being compiled)';
    }
}

# A statement's time is its own, not the next one's: the sample of a
# statement that is one long op ('x' on 30 MB, with no safe point inside)
# is taken at the start of the next statement, which perl has made the
# current one by then; the statement the timer found running is the one
# charged.  Taken at the next statement, line 5 had all of line 4's time.
{
    my $prog = "$dir/next-statement.pl";
    open my $fh, '>', $prog or die "$prog: $!";
    print $fh "my \$n = 30_000_000;\nmy \$x;\nfor my \$i (1 .. 60) {\n",
        "    \$x = 'a' x \$n;\n    \$i++;\n}\n";
    close $fh;
    my ($st, undef, $err, $file) = nytp_profile('next-statement', $prog, 'sample=1000');
    is $st, 0, 'next-statement.pl sampled' or diag $err;
    my %lt = map { $_->{line} => $_->{time} } grep { $_->{file} =~ /next-statement\.pl$/ }
        @{top_json($file)->{lines} || []};
    my $all = 0;
    $all += $_ for values %lt;
    ok $all > 0, 'next-statement.pl: lines have time';
    cmp_ok $lt{4} // 0, '>=', 0.9 * $all, "the long statement (line 4) has its time (4: @{[ $lt{4} // 0 ]} of $all s)";
    cmp_ok $lt{5} // 0, '<=', 0.1 * $all, "the statement after it (line 5) has not (5: @{[ $lt{5} // 0 ]} s)";
}

# ---- reports: "sampled at 1000 Hz, N samples", counts unknown -----------------

($st, $out, $err) = run_cmd([$nytp, 'top', '-n', '5', $file]);
is $st, 0, 'top';
like $out, qr/^.*sampled at 1000 Hz, $samples samples; counts unknown$/m, 'top: the header says so';
like $out, qr/^\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+\?\s+main::spin\b/m, 'top: calls show as ?';
unlike $out, qr/executed|\(\d+ calls\)/, 'top: no count in the header';
($st, $out, $err) = run_cmd([$nytp, 'top', '--by=calls', $file]);
is $st, 2, 'top --by=calls: refused (exit 2)';
like $err, qr/sampled, its counts are unknown/, 'top --by=calls: says why';

($st, $out, $err) = run_cmd([$nytp, 'html', '-o', "$dir/html", $file]);
is $st, 0, 'html' or diag $err;
my $index = slurp_file("$dir/html/index.html") // '';
like $index, qr/sampled at 1000 Hz, $samples samples/, 'html: the index says so';
like $index, qr/<td title="not known: the profile was sampled">\?/, 'html: counts show as ?';
my $svg = slurp_file("$dir/html/flame.svg") // '';
like $svg, qr/sampled at 1000 Hz/, 'html: the flame graph says so';
my @titles = $svg =~ m{<title>(.*?)</title>}sg;
ok @titles > 3, 'html: the flame graph has frames';
is_deeply [grep { /call/ } @titles], [], 'html: the flame graph shows no call counts';

($st, $out, $err) = run_cmd([$nytp, 'calls', $file]);
is $st, 0, 'calls';
like $out, qr/^main::fifty;main::spin \d+$/m, 'calls: the paths from the sampled stacks';
for my $cmd (['calls', '--calls'], ['flame', '--calls']) {
    ($st, $out, $err) = run_cmd([$nytp, @$cmd, $file]);
    is $st, 2, "@$cmd: refused (exit 2)";
    like $err, qr/sampled, its call counts are unknown/, "@$cmd: says why";
}
($st, $out, $err) = run_cmd([$nytp, 'flame', '--svg', '-o', "$dir/f.svg", $file]);
is $st, 0, 'flame --svg';
is_deeply [grep { /call/ } (slurp_file("$dir/f.svg") // '') =~ m{<title>(.*?)</title>}sg], [],
    'flame --svg: no call counts';
($st, $out, $err) = run_cmd([$nytp, 'dump', '--data', $file]);
like $err, qr/sampled at 1000 Hz, $samples samples; counts unknown/, 'dump --data says so';
($st, $out, $err) = run_cmd([$nytp, 'csv', '-o', "$dir/csv", $file]);
is $st, 0, 'csv';
my ($csv) = glob "$dir/csv/*shares*";
like slurp_file($csv // '/') // '', qr/^[\d.]+,,,sub spin \{/m, 'csv: the counts are left empty';

# diff: the counts of a sampled side are unknown too
($st, $out, $err) = run_cmd([$nytp, 'diff', $file, $file]);
is $st, 0, 'diff of two sampled profiles' or diag $err;
like $out, qr/^BASE .*sampled at 1000 Hz, $samples samples; counts unknown$/m, 'diff: BASE says it was sampled';
unlike $out, qr/\bcalls\b|\bstmts\b|\d statements/, 'diff: no count columns, no counts in the header';
for my $by (qw(calls statements)) {
    ($st, $out, $err) = run_cmd([$nytp, 'diff', "--by=$by", $file, $file]);
    is $st, 2, "diff --by=$by of sampled profiles: refused (exit 2)";
    like $err, qr/--by=$by: BASE was sampled \(sample=HZ\), its counts are unknown/, "diff --by=$by: says why";
}
($st, $out, $err) = run_cmd([$nytp, 'diff', '--json', $file, $file]);
my $dj = eval { decode_json($out) } // {};
ok $dj->{base}{sampled} && $dj->{base}{samples} == $samples, 'diff --json: the side says it was sampled, with its samples';
ok exists $dj->{base}{calls} && !defined $dj->{base}{calls}, 'diff --json: its calls are null';
my ($spin) = grep { $_->{name} eq 'main::spin' } @{ $dj->{subs} || [] };
ok $spin && exists $spin->{base}{calls} && !defined $spin->{base}{calls} && !defined $spin->{calls_delta},
    'diff --json: a sub\'s calls and their change are null';
my ($tst, undef, $terr, $traced) = nytp_profile('shares-traced', $shares, '', 0.2);
is $tst, 0, 'shares: traced';
($st, $out, $err) = run_cmd([$nytp, 'diff', $traced, $file]);
is $st, 0, 'diff of a traced against a sampled profile';
like $err, qr/BASE was traced and NEW sampled: the sampled times are estimates/, 'diff: warns that one side was sampled';
like $out, qr/^BASE .* statements, \d+ calls$/m, 'diff: the traced side keeps its counts';
# html ranks by counts only where they are known
for my $by (qw(statements calls)) {
    ($st, $out, $err) = run_cmd([$nytp, 'html', "--by=$by", '-o', "$dir/html-by", $file]);
    is $st, 2, "html --by=$by of a sampled profile: refused (exit 2)";
    like $err, qr/--by=$by: the profile was sampled \(sample=HZ\), its counts are unknown/, "html --by=$by: says why";
}
# no gate across modes: what it would judge is the profiler's own cost
for my $case ([[$traced, $file], 'BASE was traced and NEW sampled'],
              [[$file, $traced], 'BASE was sampled and NEW traced'],
              [[$file, $file, '--', $traced, $file], 'BASE was sampled and NEW sampled and traced']) {
    my ($args, $says) = @$case;
    ($st, $out, $err) = run_cmd([$nytp, 'diff', '--fail-above=10', @$args]);
    is $st, 2, "diff --fail-above, $says: a usage error (exit 2)";
    like $err, qr/--fail-above: \Q$says\E; .*the change would be the profiling/, "... saying why ($says)";
    is $out, '', '... and no report';
}
($st, $out, $err) = run_cmd([$nytp, 'diff', '--fail-above=10', $file, $file]);
isnt $st, 2, 'diff --fail-above of two sampled profiles: a gate';

# html --base: a sampled side is said in the index's comparison and on stderr
for my $case ([$file, $traced, 'BASE', 'this profile traced'], [$traced, $file, 'this profile', 'BASE traced']) {
    my ($base, $new, $side, $other) = @$case;
    my $rep = "$dir/html-base-" . ($side =~ tr/ /_/r);
    ($st, $out, $err) = run_cmd([$nytp, 'html', "--base=$base", '-o', $rep, $new]);
    is $st, 0, "html --base: $side sampled" or diag $err;
    my $w = $side eq 'BASE' ? qr/BASE was sampled and the report's profile traced/
                            : qr/the report's profile was sampled and BASE traced/;
    like $err, $w, "html --base ($side sampled): warns on stderr";
    my $index = slurp_file("$rep/index.html") // '';
    my ($cmp) = $index =~ m{<dt>Compared with(.*?)<dt>Total change}s;
    like $cmp // '', qr{<dt>Sampled<dd>.*<strong class=warn>\Q$side\E</strong>: sampled at 1000 Hz, $samples samples; counts unknown; \Q$other\E}s,
        "html --base ($side sampled): the index's comparison says which side was sampled";
}

# ---- the program behaves as without the profiler -------------------------------

# A module that puts perl's own despatcher back as PL_signalhook (as an XS
# module taking the hook over may): with no %SIG handler perl has no table
# of pending signals, and its despatcher reads it.  The timer raised
# perl's flag for the sampler's safe point all the same, and the program
# died of SIGSEGV at the first sample; it now runs to its end.
{
    my $c = "$dir/take_hook.c";
    open my $fh, '>', $c or die "$c: $!";
    print $fh "#include \"EXTERN.h\"\n#include \"perl.h\"\n#include \"XSUB.h\"\n",
        "void take_hook(pTHX_ CV *cv);\n",
        "void take_hook(pTHX_ CV *cv) { dXSARGS; PERL_UNUSED_VAR(cv); PERL_UNUSED_VAR(items);\n",
        "    PL_signalhook = Perl_despatch_signals; XSRETURN_EMPTY; }\n";
    close $fh;
    require Config;
    my $so = "$dir/take_hook.so";
    my @cc = (split(' ', $Config::Config{cc}), split(' ', $Config::Config{ccflags}),
        split(' ', $Config::Config{cccdlflags}), "-I$Config::Config{archlibexp}/CORE", '-shared', '-o', $so, $c);
    my ($cst, undef, $cerr) = run_cmd(\@cc);
    is $cst, 0, 'a C hook-taker builds' or diag $cerr;
    my $prog = "$dir/take-hook.pl";
    open $fh, '>', $prog or die "$prog: $!";
    print $fh "require DynaLoader;\n",
        "my \$lib = DynaLoader::dl_load_file(\$ARGV[0], 0) or die DynaLoader::dl_error();\n",
        "my \$sym = DynaLoader::dl_find_symbol(\$lib, 'take_hook') or die DynaLoader::dl_error();\n",
        "DynaLoader::dl_install_xsub('main::take_hook', \$sym);\ntake_hook();\n",
        "my \$s = 0;\nfor my \$i (1 .. 3_000_000) { \$s += \$i; \$s %= 1000; }\nprint \"done \$s\\n\";\n";
    close $fh;
    my ($st, $out, $err) = nytp_profile('take-hook', $prog, 'sample=1000', $so);
    is $st, 0, 'a program that puts perl\'s despatcher back as its signal hook runs to its end, sampled' or diag $err;
    like $out, qr/^done 0$/m, '... and prints what it prints without the profiler';
}

my $behave = scratch_script('behave.pl', <<'PERL');
use Time::HiRes qw(time sleep);
my $t = time;
select undef, undef, undef, 0.3;
printf "select %.3f\n", time - $t;
$t = time;
sleep 0.2;
printf "sleep %.3f\n", time - $t;
my $got = 0;
$SIG{USR1} = sub { $got++ };
kill USR1 => $$ for 1 .. 3;
my $end = time + 0.1;
1 while time < $end;
print "signals $got\n";
# short waits between spells of work, where the timer's signal comes
my ($short, $waits) = (0, 0);
$end = time + 0.6;
while (time < $end) {
    my $b = time + 0.0003;
    1 while time < $b;
    $t = time;
    $short++ if select(undef, undef, undef, 0.0002) < 0 || time - $t < 0.0002;
    $t = time;
    sleep 0.0001;
    $short++ if time - $t < 0.0001;
    $waits += 2;
}
print "waits $waits\nshort $short\n";
PERL
($st, $out, $err) = nytp_profile('behave', $behave, 'sample=1000');
is $st, 0, 'behave: profiled' or diag $err;
my %b = $out =~ /^(\w+) ([\d.]+)$/mg;
ok(($b{select} // 0) >= 0.29, "select waits its 0.3 s (the timer's signal never cuts a wait short): $b{select}");
ok(($b{sleep} // 0) >= 0.19, "sleep waits its 0.2 s: $b{sleep}");
is $b{signals}, 3, 'the program gets its own signals';
ok(($b{waits} // 0) > 100, "short waits between spells of work: $b{waits}");
is $b{short}, 0, 'none of them cut short by the timer (EINTR, or less than asked)';

# Time spent waiting (no CPU time, so no signal from the timer) is the
# waiting line's: in an xsub (Time::HiRes::sleep), in a slow op (select).
# (The program measures its waits: a loaded machine stretches them.)
my $waits = scratch_script('waits.pl', <<'PERL');
use Time::HiRes qw(time);
sub busy { my $end = time + $_[0]; my $n = 0; while (time < $end) { $n++ } $n }
busy(0.1);
my $t = time; Time::HiRes::sleep(0.3); printf "sleep %.4f\n", time - $t;
busy(0.1);
$t = time; select(undef, undef, undef, 0.2); printf "select %.4f\n", time - $t;
busy(0.1);
PERL
# Work and short waits in turn, as a server's requests and its select:
# each gets its share of the wall time, which the program measures.
# Charging a wait with all the time since the last sample, which had the
# work before it too, gave the waits 65 to 76% of the time where they
# took 46 to 47%.
my $mix = scratch_script('mix.pl', <<'PERL');
use Time::HiRes qw(time);
my ($tw, $tz) = (0, 0);
sub work { my $t = time; my $b = $t + 0.0003; 1 while time < $b; $tw += time - $t }
sub waitit { my $t = time; select(undef, undef, undef, 0.0002); $tz += time - $t }
my $end = time + 1.5;
while (time < $end) { work(); waitit() }
printf "work %.4f\n", $tw / ($tw + $tz);
PERL
# The waits are timed with the time-stamp counter where the CPU has a
# steady one, and with the profile's clock with NYTP_TSC=0 (or elsewhere).
for my $tsc ('', '0') {
    local $ENV{NYTP_TSC} = $tsc if length $tsc;
    my $how = length $tsc ? ' (NYTP_TSC=0)' : '';
    ($st, $out, $err, $file) = nytp_profile('mix', $mix, 'sample=1000');
    is $st, 0, "mix$how: profiled" or diag $err;
    my ($wshare) = $out =~ /^work ([\d.]+)$/m;
    my %mi = map { $_->{name} => $_->{incl} } @{top_json($file)->{subs} || []};
    my $msum = ($mi{'main::work'} // 0) + ($mi{'main::waitit'} // 0);
    my $sshare = $msum ? $mi{'main::work'} / $msum : 0;
    ok defined $wshare && abs($sshare - $wshare) < 0.08,
        sprintf "work between short waits$how: sampled share %.1f%%, measured %.1f%% (within 8 points)",
        100 * $sshare, 100 * ($wshare // 0);
}

# An xsub that calls back into perl (List::Util's first) is timed as a
# whole, but the code it called was sampled already: only the time since
# the last sample is the caller's, else the callback's time is counted
# twice (the caller's line got the 0.3 s too, and the lines added up to
# half as much again as the time profiled).
my $cb = scratch_script('callback.pl', <<'PERL');
use Time::HiRes qw(time);
use List::Util qw(first);
sub busy { my $end = time + $_[0]; my $n = 0; while (time < $end) { $n++ } $n }
my $x = first { busy(0.3); 0 } 1;
busy(0.1);
PERL
($st, $out, $err, $file) = nytp_profile('callback', $cb, 'sample=1000');
is $st, 0, 'callback: profiled' or diag $err;
my $ct = top_json($file);
my %cl = map { $_->{line} => $_->{time} } grep { $_->{file} =~ /callback\.pl$/ } @{$ct->{lines} || []};
ok(($cl{4} // 0) < 0.05, 'the line calling the xsub is not charged the callback\'s time: ' . ($cl{4} // 0));
ok(($cl{3} // 0) > 0.35, 'the callback\'s time is busy\'s: ' . ($cl{3} // 0));
ok abs(($ct->{totals}{statements} // 0) - ($ct->{totals}{profiler_duration} // 1))
        < 0.05 * ($ct->{totals}{profiler_duration} // 1),
    'callback: the line times add up to the time profiled';

for my $hz (1000, 100) {
    ($st, $out, $err, $file) = nytp_profile('waits', $waits, "sample=$hz");
    is $st, 0, "waits ($hz Hz): profiled" or diag $err;
    my %m = $out =~ /^(\w+) ([\d.]+)$/mg;
    my %lt = map { $_->{line} => $_->{time} } grep { $_->{file} =~ /waits\.pl$/ } @{top_json($file)->{lines} || []};
    ok(abs(($lt{4} // 0) - ($m{sleep} // 0)) < 0.02,
        "waits ($hz Hz): the xsub's sleep is its line's: " . ($lt{4} // 0) . ' for ' . ($m{sleep} // '?'));
    ok(abs(($lt{6} // 0) - ($m{select} // 0)) < 0.02,
        "waits ($hz Hz): select is its line's: " . ($lt{6} // 0) . ' for ' . ($m{select} // '?'));
    ok(($lt{2} // 0) > 0.2, "waits ($hz Hz): the work is busy's: " . ($lt{2} // 0));
}

# fork: the child samples into FILE.PID (its timer started again);
# forkdepth=0: it is not profiled.
my $fork = scratch_script('fork.pl', <<'PERL');
use Time::HiRes qw(time);
sub busy { my $end = time + $_[0]; my $n = 0; while (time < $end) { $n++ } $n }
busy(0.1);
my $pid = fork // die;
if (!$pid) { busy(0.3); exit 0 }
busy(0.2);
waitpid $pid, 0;
print "child $pid\n";
PERL
($st, $out, $err, $file) = nytp_profile('fork', $fork, 'sample=1000');
is $st, 0, 'fork: profiled' or diag $err;
my ($child) = $out =~ /^child (\d+)$/m;
ok -s "$file.$child", 'fork: the child wrote FILE.PID';
for my $f ($file, "$file.$child") {
    ($st, $dump, $err) = run_cmd([$nytp, 'dump', '--strict', $f]);
    is $st, 0, "fork: $f reads" or diag $err;
    my ($n) = $dump =~ /^ATTRIBUTE\tsample_count\t(\d+)$/m;
    ok(($n // 0) > 20, "fork: $f has samples (" . ($n // 'none') . ')');
}
my $cht = top_json("$file.$child");
my ($chb) = grep { $_->{name} eq 'main::busy' } @{$cht->{subs} || []};
ok $chb && $chb->{incl} > 0.2 && $chb->{incl} < 0.45, 'fork: the child has its own busy time, not the parent\'s';
($st, $out, $err, $file) = nytp_profile('fork0', $fork, 'sample=1000:forkdepth=0');
($child) = $out =~ /^child (\d+)$/m;
ok !-e "$file.$child", 'forkdepth=0: the child writes nothing';

# start=no, enable and disable: only what ran while enabled is sampled.
my $control = scratch_script('control.pl', <<'PERL');
use Time::HiRes qw(time);
sub busy { my $end = time + $_[0]; my $n = 0; while (time < $end) { $n++ } $n }
sub before { busy(0.15) }
sub during { busy(0.15) }
sub paused { busy(0.15) }
sub after  { busy(0.15) }
before();
DB::enable_profile();
during();
DB::disable_profile();
paused();
DB::enable_profile();
after();
PERL
($st, $out, $err, $file) = nytp_profile('control', $control, 'sample=1000:start=no');
is $st, 0, 'control: profiled' or diag $err;
my %c = map { $_->{name} => $_->{incl} } @{top_json($file)->{subs} || []};
ok !$c{'main::before'} && !$c{'main::paused'}, 'start=no and disable_profile: nothing sampled while off';
ok(($c{'main::during'} // 0) > 0.1 && ($c{'main::after'} // 0) > 0.1, 'enable_profile: sampled while on');

# exec: the profile is finished before the new program starts.
my $exec = scratch_script('exec.pl', <<'PERL');
use Time::HiRes qw(time);
my $end = time + 0.1; 1 while time < $end;
exec $^X, '-e', 'print "new program\n"';
PERL
($st, $out, $err, $file) = nytp_profile('exec', $exec, 'sample=1000');
is $out, "new program\n", 'exec: the new program ran';
($st, $out, $err) = run_cmd([$nytp, 'dump', '--strict', $file]);
is $st, 0, 'exec: the profile was finished first' or diag $err;

# Slow ops are subs (Pkg::CORE:name) as in a traced profile; recursion is
# not counted twice in inclusive time.
my $ops = scratch_script('ops.pl', <<'PERL');
use Time::HiRes qw(time);
my $s = "ab" x 20000;
sub rec { my $d = shift; return $d ? rec($d - 1) : matcher() }
sub matcher { my $end = time + 0.3; my $n = 0; while (time < $end) { $n++ for $s =~ /(a)(?=b)/g } $n }
rec(20);
PERL
($st, $out, $err, $file) = nytp_profile('ops', $ops, 'sample=1000');
is $st, 0, 'ops: profiled' or diag $err;
my $o = top_json($file);
my %oi = map { $_->{name} => $_ } @{$o->{subs} || []};
ok $oi{'main::CORE:match'} && $oi{'main::CORE:match'}{excl} > 0.05, 'a regex match is main::CORE:match';
my $dur = $o->{totals}{profiler_duration} // 0;
ok $oi{'main::rec'} && $oi{'main::rec'}{incl} <= $dur * 1.01,
    'recursion: inclusive time of rec at most the time profiled';

# Sources: of string evals that define subs (not on disk), of every file
# with savesrc=1.
my $evals = scratch_script('evals.pl', <<'PERL');
use Time::HiRes qw(time);
eval 'sub spin_in_eval { my $end = time + $_[0]; my $n = 0; while (time < $end) { $n++ } $n } 1' or die;
spin_in_eval(0.2);
PERL
($st, $out, $err, $file) = nytp_profile('evals', $evals, 'sample=1000');
is $st, 0, 'evals: profiled' or diag $err;
($st, $dump) = run_cmd([$nytp, 'dump', $file]);
like $dump, qr/^SRC_LINE\t\d+\t1\tsub spin_in_eval/m, 'the source of an eval that defines subs is saved';
unlike $dump, qr/^SRC_LINE\t\d+\t\d+\tuse Time::HiRes/m, '... not that of the file';
($st, $out, $err, $file) = nytp_profile('evals1', $evals, 'sample=1000:savesrc=1');
($st, $dump) = run_cmd([$nytp, 'dump', $file]);
like $dump, qr/^SRC_LINE\t\d+\t\d+\tuse Time::HiRes/m, 'savesrc=1: the file\'s source is saved too';

# Options.
for my $bad ('sample=abc', 'sample=20000', 'sample=-1') {
    ($st, $out, $err) = nytp_profile('bad', $exec, $bad);
    isnt $st, 0, "$bad: an error";
    like $err, qr/option 'sample' wants a rate/, "$bad: says what it wants";
}

# ---- nytp run --sample --cpu: CPU time, not wall time ----------------------------
# A sub that waits 0.4 s and one that computes: sampled on the wall clock
# the waiting ranks first with about its 0.4 s; with --cpu the samples
# weigh the CPU time used and the wait costs next to nothing.
{
    my $prog = "$dir/wait-work.pl";
    open my $fh, '>', $prog or die $!;
    print $fh 'sub waiter { select undef, undef, undef, 0.4 }
sub worker {
    my $x = 0;
    for my $i (1 .. 600_000) {
        $x += $i % 7;
    }
    return $x;
}
waiter();
worker();
';
    close $fh;
    my %excl;
    for my $case (['wall', '--sample'], ['cpu', '--sample', '--cpu']) {
        my ($name, @opts) = @$case;
        my $out = "$dir/wait-work-$name.out";
        my ($st, undef, $err) = run_cmd([$nytp, 'run', @opts, '-o', $out, $prog]);
        is $st, 0, "run @opts: a waiter and a worker" or diag $err;
        my ($dst, $dump) = run_cmd([$nytp, 'dump', '--tags=OPTION', $out]);
        like $dump, $name eq 'cpu' ? qr/^OPTION\tclock\t2$/m : qr/^OPTION\tclock\t1$/m,
            "run @opts: the clock " . ($name eq 'cpu' ? '2, the CPU time' : '1, wall time');
        my ($tst, $json) = run_cmd([$nytp, 'top', '--json', '-n', '0', $out]);
        my $t = eval { decode_json($json) } || {};
        $excl{$name}{ $_->{name} } = $_->{excl} for @{ $t->{subs} || [] };
    }
    my ($ww, $wk) = map { $excl{wall}{$_} // 0 } 'main::CORE:sselect', 'main::worker';
    my ($cw, $ck) = map { $excl{cpu}{$_} // 0 } 'main::CORE:sselect', 'main::worker';
    ok $ww >= 0.3, "--sample: the wait has its wall time ($ww s; the worker $wk s)";
    ok $ck > 0 && $cw < 0.2 * $ck && $cw < 0.05,
        "--sample --cpu: the wait costs next to nothing against the worker ($cw s, the worker $ck s)";
    my ($st, undef, $err) = run_cmd([$nytp, 'run', '--cpu', '-o', "$dir/x.out", $prog]);
    is $st, 2, '--cpu without --sample: a usage error';
    like $err, qr/--cpu weighs samples by CPU time: give it with --sample/, '... saying why';
}

done_testing;
