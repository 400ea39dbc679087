#!/usr/bin/perl
# 'nytp dump --data' against the oracle (tests/oracle-data.pl:
# Devel::NYTProf::Data with skip_collapse_evals, dump_profile_data with a
# TAB separator): byte for byte on testdata and on profiles of a varied
# set of programs under every option variant; truncated files against the
# oracle's view of the same chunks; several inputs; JSON.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;
use JSON::PP;
use Compress::Raw::Zlib;

my $nytp = nytp();
my $oracle = repo() . '/tests/oracle-data.pl';
my $td = testdata();
my $dir = scratch_dir();

sub compare {
    my ($file, $label, @extra) = @_;
    my ($ost, $oout, $oerr) = run_cmd([$^X, $oracle, $file]);
    my ($st, $out, $err) = run_cmd([$nytp, 'dump', '--data', @extra, $file]);
    is $ost, 0, "$label: the oracle loads it" or diag $oerr;
    is $st, 0, "$label: nytp exits 0" or diag $err;
    return same_text($out, $oout, $label);
}

sub same_text {
    my ($out, $want, $label) = @_;
    return pass("$label: identical to the oracle") if $out eq $want;
    my @a = split /^/, $out;
    my @b = split /^/, $want;
    my $i = 0;
    $i++ while $i < @a && $i < @b && $a[$i] eq $b[$i];
    fail "$label: identical to the oracle";
    diag "first difference at line " . ($i + 1) . ":\n nytp:   " . ($a[$i] // "(end)\n")
        . " oracle: " . ($b[$i] // "(end)\n");
    return 0;
}

# Every real profile in testdata.
opendir my $dh, $td or die;
compare("$td/$_", $_) for sort grep { /\.out\z/ } readdir $dh;
compare("$td/broken/minor9.out", 'minor9');

# The test programs under every option variant.
my @programs = qw(evals-loop closures xsubs-slowops modules fork deep);
my @variants = ('', 'blocks=1', 'calls=2', 'savesrc=0', 'compress=0', 'slowops=0', 'stmts=0', 'subs=0');
for my $prog (@programs) {
    for my $v (@variants) {
        # Devel::NYTProf 6.12 itself dies (SIGSEGV) with calls=2 once
        # recursion is about 1,000 deep, so that profile cannot be made.
        next if $prog eq 'deep' && $v eq 'calls=2';
        my $name = "$prog-" . ($v || 'default');
        $name =~ s/=/-/g;
        my $f = fresh_profile($name, repo() . "/tests/programs/$prog.pl", $v);
        compare($f, "$prog ($v)");
        if ($prog eq 'fork') {
            my @child = glob("$f.*");
            is scalar(@child), 1, "$prog ($v): the child wrote its own profile";
            compare($child[0], "$prog child ($v)") if @child;
        }
    }
}

# Truncated files.  The oracle dies on a file cut inside a chunk, so it is
# given the same chunks as a plain file cut at the last complete chunk:
# header bytes up to the 'z', then the inflated data, cut at the chunk
# boundary nytp names.  nytp's model of the cut file must equal the
# oracle's model of that, except 'complete', which nytp sets to '' for
# every cut file (the oracle cannot tell a cut at a boundary).
sub plain_prefix {
    my ($file, $inflated_offset, $plain_offset) = @_;
    open my $fh, '<:raw', $file or die;
    my $bytes = do { local $/; <$fh> };
    my $z = index $bytes, "\nz";
    my $out;
    if ($z >= 0 && defined $inflated_offset) {
        $z++;
        my ($inf) = Compress::Raw::Zlib::Inflate->new(-ConsumeInput => 1, -LimitOutput => 0);
        my $data = substr $bytes, $z + 1;
        my $plain = '';
        $inf->inflate($data, $plain);    # partial output of a cut stream is kept
        $out = substr($bytes, 0, $z) . substr($plain, 0, $inflated_offset);
    } else {
        $out = substr $bytes, 0, $plain_offset;
    }
    my $cut = "$dir/plain-prefix.out";
    open my $o, '>:raw', $cut or die;
    print $o $out;
    close $o;
    return $cut;
}

for my $name (qw(trunc-plain-string trunc-plain-boundary trunc-z-middle trunc-z-end)) {
    my $file = "$td/broken/$name.out";
    my ($st, $out, $err) = run_cmd([$nytp, 'dump', '--data', $file]);
    is $st, 0, "$name: --data exits 0";
    like $err, qr/^nytp dump: warning: \Q$file\E: truncated at offset \d+.*loaded everything before the cut\n\z/,
        "$name: one warning naming file and offset";
    like $out, qr/^attribute\tcomplete\t\n/m, "$name: complete is empty";
    my ($sst, $sout, $serr) = run_cmd([$nytp, 'dump', '--data', '--strict', $file]);
    is $sst, 1, "$name: --strict exits 1";
    is $sout, '', "$name: --strict prints nothing";
    # where the cut is: the chunk nytp could not complete starts here
    my ($cst, undef, $cerr) = run_cmd([$nytp, 'dump', $file]);
    my ($off, $infl) = $cerr =~ /truncated at offset (\d+)( of the inflated data)?/ or die $cerr;
    my $cut = plain_prefix($file, $infl ? $off : undef, $off);
    my ($ost, $oout, $oerr) = run_cmd([$^X, $oracle, $cut]);
    is $ost, 0, "$name: the oracle loads the same chunks" or diag $oerr;
    $oout =~ s/^attribute\tcomplete\t1\n/attribute\tcomplete\t\n/m;
    same_text($out, $oout, "$name: model of everything before the cut");
}

# Corrupt files: exit 1, one line, no output.
for my $name (qw(bad-tag bad-zlib string-past-end nv-size-4 empty random major4 ../fuzz/huge-line ../fuzz/line-4294967295)) {
    my $file = "$td/broken/$name.out";
    my ($st, $out, $err) = run_cmd([$nytp, 'dump', '--data', $file]);
    is $st, 1, "$name: --data exits 1";
    is $out, '', "$name: prints nothing";
    my @errors = grep { !/: warning: / } split /\n/, $err;
    is scalar(@errors), 1, "$name: one error line on stderr" or diag $err;
    like $errors[0], qr/^nytp dump: \Q$file\E: /, "$name: names the file";
}

# Several inputs: a file and its copy double every count and time, keep
# the fids, subs and call sites; the parent and child of a fork combine.
{
    my $f = "$td/demo.out";
    my ($st, $one) = run_cmd([$nytp, 'dump', '--data', $f]);
    system('cp', $f, "$dir/demo-copy.out") == 0 or die;
    my ($st2, $two, $err2) = run_cmd([$nytp, 'dump', '--data', $f, "$dir/demo-copy.out"]);
    is $st2, 0, 'same file twice: exit 0' or diag $err2;
    is $err2, '', 'same file twice: no warning';
    my (%l1, %l2);
    for ([$one, \%l1], [$two, \%l2]) {
        my ($text, $h) = @$_;
        for (split /\n/, $text) {
            $h->{"$1\t$2"} = [$3, $4] if /^fid_line_time\t(\d+)\t(\d+)\t\[ (\S+) (-?\d+) \]$/;
        }
    }
    is_deeply [sort keys %l2], [sort keys %l1], 'same file twice: the same lines';
    my $bad = 0;
    for my $k (keys %l1) {
        $bad++ if $l2{$k}[1] != 2 * $l1{$k}[1] || abs($l2{$k}[0] - 2 * $l1{$k}[0]) > 1e-12;
    }
    is $bad, 0, 'same file twice: every line count and time doubled';
    my ($c1) = $one =~ /^attribute\ttotal_sub_calls\t(\d+)$/m;
    my ($c2) = $two =~ /^attribute\ttotal_sub_calls\t(\d+)$/m;
    is $c2, 2 * $c1, 'same file twice: total_sub_calls doubled';
    my @s1 = $one =~ /^sub_subinfo\t([^\t]+)\t\[/mg;
    my @s2 = $two =~ /^sub_subinfo\t([^\t]+)\t\[/mg;
    is_deeply \@s2, \@s1, 'same file twice: the same subs';
    my ($fs) = $one =~ /^(fid_fileinfo\t1\t\[.*)$/m;
    like $two, qr/^\Q$fs\E$/m, 'same file twice: fid 1 unchanged';

    my ($fst, $fout, $ferr) = run_cmd([$nytp, 'dump', '--data', "$td/fork.out", "$td/fork-child.out"]);
    is $fst, 0, 'parent and child: exit 0' or diag $ferr;
    like $fout, qr/^attribute\tcomplete\t1$/m, 'parent and child: complete';
    my ($m) = $fout =~ /^attribute\ttotal_stmts_measured\t(\d+)$/m;
    my ($pst, $pout) = run_cmd([$nytp, 'dump', '--data', "$td/fork.out"]);
    my ($cst, $cout) = run_cmd([$nytp, 'dump', '--data', "$td/fork-child.out"]);
    my ($pm) = $pout =~ /^attribute\ttotal_stmts_measured\t(\d+)$/m;
    my ($cm) = $cout =~ /^attribute\ttotal_stmts_measured\t(\d+)$/m;
    is $m, $pm + $cm, 'parent and child: statements add up';

    my ($wst, $wout, $werr) = run_cmd([$nytp, 'dump', '--data', $f, "$td/broken/minor9.out"]);
    is $wst, 0, 'different programs: still loads';
}

# Disagreeing inputs get a warning naming the attribute and values.
{
    open my $in, '<:raw', "$td/demo-compress0.out" or die;
    my $b = do { local $/; <$in> };
    $b =~ s/^:perl_version=5\.36\.0$/:perl_version=5.99.0/m or die;
    my $g = "$dir/other-perl.out";
    open my $o, '>:raw', $g or die;
    print $o $b;
    close $o;
    my ($st, $out, $err) = run_cmd([$nytp, 'dump', '--data', "$td/demo-compress0.out", $g]);
    is $st, 0, 'other perl version: still loads';
    like $err, qr/inputs disagree on perl_version: 5\.36\.0 in an earlier input, 5\.99\.0 in \Q$g\E/,
        'other perl version: a warning with both values';
}

# JSON: one valid document whose numbers agree with the text form.
{
    my ($st, $out, $err) = run_cmd([$nytp, 'dump', '--data', '--json', "$td/evals.out"]);
    is $st, 0, '--data --json: exit 0' or diag $err;
    my $doc = eval { JSON::PP->new->decode($out) };
    ok $doc, '--data --json: valid JSON' or diag $@;
    my ($tst, $text) = run_cmd([$nytp, 'dump', '--data', "$td/evals.out"]);
    my %sub_calls = $text =~ /^sub_subinfo\t([^\t]+)\t\[ \S+ calls (\d+) /mg;
    is_deeply { map { $_->{name} => $_->{calls} } @{ $doc->{subs} } }, \%sub_calls,
        '--data --json: the same subs and call counts';
    my $nlines = () = $text =~ /^fid_line_time\t/mg;
    my $jlines = 0;
    $jlines += @{ $_->{lines} } for @{ $doc->{files} };
    is $jlines, $nlines, '--data --json: the same number of lines with statements';
    is $doc->{totals}{total_stmts_measured},
        ($text =~ /^attribute\ttotal_stmts_measured\t(\d+)$/m)[0], '--data --json: totals';
    ok $doc->{complete}, '--data --json: complete';
}

# Collapsing sibling evals (--collapse-evals), on its own: the survivor of
# each group holds the sums of its siblings, totals are unchanged, and
# nothing of the donors is left behind.
sub parse_data {
    my $text = shift;
    my (%line, %files, %evals, %subs, %calls);
    for (split /\n/, $text) {
        if (/^fid_line_time\t(\d+)\t(\d+)\t\[ (\S+) (-?\d+) \]$/) { $line{$1}{$2} = [$3, $4] }
        elsif (/^fid_fileinfo\t(\d+)\t\[ (.*) ((?:\d+ \d+)|) (\d+) (\d+) \d+ \d+ \]$/) {
            $files{$1} = $2;
            $evals{$1} = $3;
        }
        elsif (/^sub_subinfo\t([^\t]+)\t\[ \S+ calls (\d+) times (\S+) (\S+)/) { $subs{$1} = [$2, $3, $4] }
    }
    return { line => \%line, files => \%files, evals => \%evals, subs => \%subs };
}

{
    my $f = fresh_profile('collapse', <<'PL');
my $t = 0;
for my $i (1 .. 6) {
    eval 'my $s = 0; $s += $_ for 1 .. 10; $t += $s';
    my $f = eval 'sub { $_[0] + 1 }';
    $t = $f->($t);
}
eval "\$t += $_" for 1 .. 3;
print "$t\n";
PL
    my ($st, $plain) = run_cmd([$nytp, 'dump', '--data', $f]);
    my ($cst, $coll, $cerr) = run_cmd([$nytp, 'dump', '--data', '--collapse-evals', $f]);
    is $cst, 0, 'collapse: exit 0' or diag $cerr;
    my $a = parse_data($plain);
    my $b = parse_data($coll);
    my $evals_before = grep { $a->{evals}{$_} } keys %{ $a->{evals} };
    my $evals_after = grep { $b->{evals}{$_} } keys %{ $b->{evals} };
    is $evals_before, 15, 'collapse: 15 string evals before';
    is $evals_after, 5, 'collapse: 3 survivors for the loop, 2 for the different sources';
    like $coll, qr/^fid_fileinfo\t1\teval\t3\t\[ count 1 nested 0 merged 5 \]$/m,
        'collapse: the eval line says how many were merged';
    # every fid still shown has its file; no donor leaves line data behind
    for my $fid (keys %{ $b->{line} }) {
        ok exists $b->{files}{$fid}, "collapse: lines of fid $fid belong to a file";
    }
    # statement counts and time per source line of the survivors
    my %sum_a;
    for my $fid (keys %{ $a->{line} }) {
        my $key = $a->{evals}{$fid} ? "eval:$a->{evals}{$fid}" : "fid:$fid";
        for my $line (keys %{ $a->{line}{$fid} }) {
            $sum_a{"$key:$line"}[0] += $a->{line}{$fid}{$line}[0];
            $sum_a{"$key:$line"}[1] += $a->{line}{$fid}{$line}[1];
        }
    }
    # the three different-source evals stay apart, so group only the loop's
    my ($loop_surv) = grep { $b->{evals}{$_} eq '1 3' } keys %{ $b->{evals} };
    is $b->{line}{$loop_surv}{1}[1], $sum_a{'eval:1 3:1'}[1], 'collapse: survivor count = sum of siblings';
    ok abs($b->{line}{$loop_surv}{1}[0] - $sum_a{'eval:1 3:1'}[0]) < 1e-12,
        'collapse: survivor time = sum of siblings';
    my ($n_a, $n_b, $t_a, $t_b) = (0, 0, 0, 0);
    for my $x ([$a, \$n_a, \$t_a], [$b, \$n_b, \$t_b]) {
        for my $fid (keys %{ $x->[0]{line} }) {
            for (values %{ $x->[0]{line}{$fid} }) { ${ $x->[1] } += $_->[1]; ${ $x->[2] } += $_->[0] }
        }
    }
    is $n_b, $n_a, 'collapse: total statement count unchanged';
    ok abs($t_b - $t_a) < 1e-9, 'collapse: total statement time unchanged';
    my @anon_a = grep { /__ANON__\[\(eval/ } keys %{ $a->{subs} };
    my @anon_b = grep { /__ANON__\[\(eval/ } keys %{ $b->{subs} };
    is scalar(@anon_a), 6, 'collapse: 6 anon subs from evals before';
    is scalar(@anon_b), 1, 'collapse: merged into 1';
    my $calls_a = 0;
    $calls_a += $a->{subs}{$_}[0] for @anon_a;
    is $b->{subs}{ $anon_b[0] }[0], $calls_a, 'collapse: its calls are the sum';
    my ($tc_a) = $plain =~ /^attribute\ttotal_sub_calls\t(\d+)/m;
    my ($tc_b) = $coll =~ /^attribute\ttotal_sub_calls\t(\d+)/m;
    is $tc_b, $tc_a, 'collapse: total sub calls unchanged';
    my @gone = grep { !exists $b->{files}{$_} } keys %{ $a->{files} };
    is scalar(@gone), 10, 'collapse: the 10 donors are gone';
    my $left = grep { my $g = $_; $coll =~ /^(fid_\w+|sub_subinfo\t[^\t]+)\t$g\t/m } @gone;
    is $left, 0, 'collapse: no line of the output names a donor fid';
    # the collapsed model is still consistent in JSON
    my ($jst, $json) = run_cmd([$nytp, 'dump', '--data', '--collapse-evals', '--json', $f]);
    ok eval { JSON::PP->new->decode($json) }, 'collapse: JSON still valid';
}

# Statement ticks below zero (the clock went back) and around the model's
# table of small tick counts: the same seconds as the oracle's division
# (negative ticks were read as 2^64 - N, 1.8e12 seconds).
{
    my $f = "$dir/negative-ticks.out";
    system(repo() . '/build/gen-profile', 'negative-ticks', 3, $f) == 0 or die;
    compare($f, 'negative and large statement ticks');
    my (undef, $out) = run_cmd([$nytp, 'dump', '--data', $f]);
    like $out, qr/^fid_line_time\t1\t1\t\[ 4\.7e-06 2 \]$/m, 'line 1: 50 - 3 ticks, two statements';
}

# Text chunks (attributes, options, comments) where Devel::NYTProf's
# reader inflates a buffer of 160 KiB at a time: it reads a line that runs
# over the end of one wrongly (the rest overwrites its start: the
# attribute lost, "attribute malformed"), so the writer puts none there.
{
    my $f = "$dir/text-lines.out";
    system(repo() . '/build/gen-profile', 'text-lines', 1000, $f) == 0 or die;
    my ($ost, $oout, $oerr) = run_cmd([$^X, $oracle, $f]);
    is $oerr, '', 'text lines over 300 KB compressed: the oracle reads them without a warning';
    my %attr = $oout =~ /^attribute\t(a\d+)\t(v+)$/mg;
    is scalar(keys %attr), 1000, '... and has every attribute';
    is scalar(grep { length($attr{$_}) + length($_) != 97 } keys %attr), 0, '... each whole';
    compare($f, 'text lines over 300 KB compressed');
}

# A loader warning says where its chunk is (it said "offset 0, chunk 0"):
# here the last NEW_FID, chunk 7, names a parent file id never declared.
{
    my $f = "$dir/undeclared.out";
    system(repo() . '/build/gen-profile', 'undeclared', 7, $f) == 0 or die;
    my $at = index(slurp_file($f), "\@\x02\x07\x03"); # NEW_FID 2, run in 7 at line 3
    for my $cmd (['dump', '--data'], ['cachegrind', '-o', "$dir/out.callgrind"], ['csv', '-o', "$dir/undeclared-csv"]) {
        my ($st, undef, $err) = run_cmd([$nytp, @$cmd, $f]);
        like $err, qr/^nytp $cmd->[0]: warning: \Q$f\E: at offset $at, chunk 7: string eval \(eval 1\)\[x\.pl:3\] \(file id 2\) names an unknown parent file id 7; treated as a file$/m,
            "$cmd->[0]: the warning names the offset and the chunk";
    }
}

done_testing;
