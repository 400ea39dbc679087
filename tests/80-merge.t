#!/usr/bin/perl
# 'nytp merge' against nytprofmerge and against Devel::NYTProf::Data.
#
# Every merged file is loaded by Devel::NYTProf::Data (no warning allowed)
# and its aggregate (dump_profile_data) is compared, after naming files
# instead of numbering them, with
#  - the aggregate of nytprofmerge's output for the same inputs, and
#  - the sum of the aggregates Devel::NYTProf::Data makes of each input.
# Where nytp differs from nytprofmerge on purpose (see nytp-merge(1)):
#  - string evals: nytp joins the k-th eval run at a place (parent file
#    and line) in each input into one; nytprofmerge keeps every eval of
#    every input apart.  So files are compared with all evals run at one
#    place summed into one bucket, and the eval counts per line are not
#    compared.
#  - a DISCOUNT at the very end of one input: nytprofmerge carries it into
#    the next input's first statement (which then loses its count); nytp
#    does not.  Such a line may show one statement more in nytp's output,
#    once per input after the first, and total_stmts_discounted one less.
#  - times: nytp sums integer ticks and divides once, Devel::NYTProf
#    divides each statement's ticks and sums the quotients: equal to
#    1e-9 relative.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;
use File::Copy qw(copy);

my $nytp = nytp();
my $td = testdata();
my $dir = scratch_dir();

# A file given twice is read once (with a warning); merging a profile with
# itself takes a copy of it.
my $ncopy = 0;
sub copy_of {
    my $f = shift;
    (my $base = $f) =~ s{.*/}{};
    my $c = "$dir/copy" . ++$ncopy . "-$base";
    copy($f, $c) or die "copy $f: $!";
    return $c;
}
my $oracle = repo() . '/tests/oracle-data.pl';

# Devel::NYTProf::Data's aggregate of a file, and every warning it gave.
sub oracle {
    my ($file) = @_;
    my ($st, $out, $err) = run_cmd([$^X, '-e', <<'PERL', $file]);
use strict; use warnings; use Devel::NYTProf::Data;
$SIG{__WARN__} = sub { print STDERR "WARN: @_" };
my $p = Devel::NYTProf::Data->new({ filename => shift, quiet => 1, skip_collapse_evals => 1 });
$p->dump_profile_data({ separator => "\t" });
PERL
    return ($st, $out, $err);
}

# The aggregate with files named, not numbered: a file is its name, an
# eval is its parent's key, ':' and the line it ran on; entries of the
# same key are summed.
sub normalize {
    my ($text) = @_;
    my (%n, %file);
    for (split /\n/, $text) {
        if (/^fid_fileinfo\t(\d+)\t\[ (.*) (\d*) (\d*) (\d+) (\d+) (\d+) (\d+) \]$/) {
            $file{$1} = [$2, $3, $4];
        }
    }
    my $key;
    $key = sub {
        my ($fid, $depth) = @_;
        my $f = $file{$fid} or return "fid$fid";
        return $f->[0] if !length $f->[1] || $depth > 50;
        return $key->($f->[1], $depth + 1) . ":$f->[2]/eval";
    };
    for (split /\n/, $text) {
        my @f = split /\t/;
        if ($f[0] eq 'attribute' || $f[0] eq 'option') {
            $n{"$f[0]\t$f[1]"} = $f[2] // '';
        } elsif ($f[0] eq 'profile_modes') {
            $n{$_} = 1;
        } elsif ($f[0] =~ /^fid_(line|block|sub)_time$/ && @f == 4) {
            my ($t, $c) = $f[3] =~ /^\[ (\S+) (-?\d+) \]$/ or next;
            my $e = $n{"$f[0]\t" . $key->($f[1], 0) . "\t$f[2]"} //= [0, 0];
            $e->[0] += $t;
            $e->[1] += $c;
        } elsif ($f[0] eq 'fid_fileinfo' && @f == 5 && $f[2] eq 'sub') {
            $n{"sub\t" . $key->($f[1], 0) . "\t$f[3]\t$f[4]"} = 1;
        } elsif ($f[0] eq 'fid_fileinfo' && @f == 6 && $f[2] eq 'call') {
            my @v = $f[5] =~ /^\[ (\d+) (\S+) (\S+) 0 0 (\S+) (\d+) (.*) \]$/ or next;
            my $e = $n{"call\t" . $key->($f[1], 0) . "\t$f[3]\t$f[4]"} //= [0, 0, 0, 0, 0, {}];
            $e->[$_] += $v[$_] for 0 .. 3;
            $e->[4] = $v[4] if $v[4] > $e->[4];
            $e->[5]{$_} = 1 for split /\|/, $v[5];
        } elsif ($f[0] eq 'sub_subinfo' && @f == 3) {
            # [ fid:first-last calls N times incl excl rec_depth reci ]
            my @v = $f[2] =~ /^\[ (\d+):(\S*) calls (\d+) times (\S+) (\S+) (\d+) (\S+) \]$/ or next;
            my $e = $n{"subinfo\t$f[1]"} //= [0, 0, 0, 0, 0, {}];
            $e->[0] += $v[2];
            $e->[1] += $v[3];
            $e->[2] += $v[4];
            $e->[3] = $v[5] if $v[5] > $e->[3];
            $e->[4] += $v[6];
            $e->[5]{ $key->($v[0], 0) . ":$v[1]" } = 1;
        }
    }
    return \%n;
}

sub num_eq {
    my ($a, $b) = @_;
    return 1 if $a eq $b;
    no warnings 'numeric';
    return 1 if $a == $b;
    return abs($a - $b) <= 1e-9 * (abs($a) + abs($b)) + 1e-12;
}

sub same_value {
    my ($a, $b) = @_;
    return 0 if ref $a ne ref $b;
    if (ref $a eq 'ARRAY') {
        return 0 if @$a != @$b;
        same_value($a->[$_], $b->[$_]) || return 0 for 0 .. $#$a;
        return 1;
    }
    if (ref $a eq 'HASH') {
        return join("\n", sort keys %$a) eq join("\n", sort keys %$b);
    }
    my $num = qr/^-?\d+(?:\.\d+)?(?:e[-+]?\d+)?\z/;
    return num_eq($a, $b) if $a =~ $num && $b =~ $num;
    return $a eq $b;
}

sub show { my $v = shift; return ref $v eq 'ARRAY' ? '[' . join(' ', map { show($_) } @$v) . ']' : ref $v eq 'HASH' ? '{' . join('|', sort keys %$v) . '}' : $v // '(none)' }

# Compare two normalized aggregates; skip: keys to leave out; carry: how
# many statements more $ours may have on lines (in each of fid_line_time,
# fid_block_time and fid_sub_time).
sub same_aggregate {
    my ($ours, $want, $label, %opt) = @_;
    my %carry = map { $_ => $opt{carry} // 0 } qw(line block sub);
    my @bad;
    my %keys = map { $_ => 1 } keys %$ours, keys %$want;
    for my $k (sort keys %keys) {
        next if $opt{skip} && $k =~ $opt{skip};
        # a sub that inputs place in different files: nytp keeps the
        # first input's place, nytprofmerge every place
        next if $opt{homes} && !defined $a && $k =~ /^sub\t.*\t([^\t]+)\t[^\t]+$/
            && $opt{homes}{$1} > 1 && $opt{homes}{ours}{$1};
        my ($a, $b) = ($ours->{$k}, $want->{$k});
        if ($opt{homes} && $k =~ /^subinfo\t(.*)$/ && ($opt{homes}{$1} // 0) > 1 && ref $a && ref $b) {
            # placed in several files by the inputs: compare all but the place
            ($a, $b) = ([@$a[0 .. 4]], [@$b[0 .. 4]]);
        }
        next if defined $a && defined $b && same_value($a, $b);
        if ($k =~ /^fid_(line|block|sub)_time\t/ && ref $a && ref $b && $a->[1] > $b->[1]
            && $a->[1] - $b->[1] <= $carry{$1} && num_eq($a->[0], $b->[0])) {
            $carry{$1} -= $a->[1] - $b->[1];
            next;
        }
        push @bad, "$k: nytp " . show($a) . ", expected " . show($b);
    }
    ok !@bad, $label or diag join "\n", @bad[0 .. ($#bad < 9 ? $#bad : 9)];
}

my $n = 0;

# Merge @inputs with nytp and nytprofmerge; compare as described above.
sub check_merge {
    my ($label, @inputs) = @_;
    $n++;
    my $ours = "$dir/ours-$n.out";
    my $theirs = "$dir/theirs-$n.out";
    my ($st, $out, $err) = run_cmd([$nytp, 'merge', '-o', $ours, @inputs]);
    is $st, 0, "$label: nytp merge exits 0" or diag $err;
    is $err, '', "$label: no warning";
    my ($tst, undef, $terr) = run_cmd(['nytprofmerge', '-o', $theirs, @inputs]);
    is $tst, 0, "$label: nytprofmerge exits 0" or diag $terr;

    my ($ost, $odump, $oerr) = oracle($ours);
    is $ost, 0, "$label: Devel::NYTProf::Data loads the merged file";
    # no warning, except those it gives for the inputs themselves
    my %input_warnings;
    for my $in (@inputs) {
        $input_warnings{$_} = 1 for split /\n/, (oracle($in))[2];
    }
    my @new = grep { !$input_warnings{$_} } split /\n/, $oerr;
    is "@new", '', "$label: ... without a warning";
    my ($dst, $ddump) = run_cmd([$nytp, 'dump', '--data', $ours]);
    is $ddump, $odump, "$label: nytp dump --data reads the merged file as Devel::NYTProf::Data does";

    my $norm = normalize($odump);
    my (undef, $tdump) = oracle($theirs);
    # nytprofmerge's leak of a final DISCOUNT into the next input
    my $carry = @inputs - 1;
    my $t = normalize($tdump);
    if (defined $t->{"attribute\ttotal_stmts_discounted"}) {
        my $d = $t->{"attribute\ttotal_stmts_discounted"} - $norm->{"attribute\ttotal_stmts_discounted"};
        ok $d >= 0 && $d <= $carry, "$label: statements discounted: nytprofmerge has at most $carry more";
    }
    my %homes;
    for (keys %$t) {
        $homes{$1}++ if /^sub\t.*\t([^\t]+)\t[^\t]+$/;
    }
    for (keys %$norm) {
        $homes{ours}{$1} = 1 if /^sub\t.*\t([^\t]+)\t[^\t]+$/;
    }
    same_aggregate($norm, $t, "$label: the same aggregate as nytprofmerge's output",
                   skip => qr/^attribute\ttotal_stmts_discounted$/, carry => $carry,
                   homes => \%homes);

    # the sum of the inputs, each as Devel::NYTProf::Data sees it
    my %sum;
    my %defined;    # sub name -> the first input that defines it
    for my $in (@inputs) {
        my ($ist, $idump) = oracle($in);
        my $i = normalize($idump);
        for my $k (keys %$i) {
            if ($k =~ /^sub\t.*\t([^\t]+)\t[^\t]+$/) {
                next if ($defined{$1} //= $in) ne $in;
            }
            next if $k =~ /^(attribute|option|profile_modes)/ && $k !~ /^attribute\ttotal_(stmts_measured|stmts_discounted|sub_calls|stmts_duration)$/;
            my $v = $i->{$k};
            if (!ref $v) {
                $sum{$k} = $k =~ /^attribute/ ? ($sum{$k} // 0) + $v : $v;
            } elsif ($k =~ /^fid_/) {
                my $e = $sum{$k} //= [0, 0];
                $e->[$_] += $v->[$_] for 0, 1;
            } elsif ($k =~ /^call\t/) {
                my $e = $sum{$k} //= [0, 0, 0, 0, 0, {}];
                $e->[$_] += $v->[$_] for 0 .. 3;
                $e->[4] = $v->[4] if $v->[4] > $e->[4];
                $e->[5]{$_} = 1 for keys %{ $v->[5] };
            } elsif ($k =~ /^subinfo\t/) {
                my $e = $sum{$k} //= [0, 0, 0, 0, 0, {}];
                $e->[$_] += $v->[$_] for 0 .. 2, 4;
                $e->[3] = $v->[3] if $v->[3] > $e->[3];
                $e->[5]{$_} = 1 for keys %{ $v->[5] };
            }
        }
    }
    my %mine = map { $_ => $norm->{$_} } grep {
        !/^(attribute|option|profile_modes)/ || /^attribute\ttotal_(stmts_measured|stmts_discounted|sub_calls|stmts_duration)$/
    } keys %$norm;
    # a sub defined in several files is listed under the one
    # Devel::NYTProf::Data chose per input: compare the choice of the
    # first input only
    for my $k (grep { /^subinfo\t/ } keys %mine) {
        next unless $sum{$k};
        $sum{$k}[5] = $mine{$k}[5] if keys %{ $sum{$k}[5] } > 1;
    }
    same_aggregate(\%mine, \%sum, "$label: the sum of the inputs' aggregates");
    return ($ours, $odump);
}

# ---- several runs and processes of the same program --------------------------

my @progs = qw(closures deep evals-loop modules xsubs-slowops);
for my $prog (@progs) {
    my $src = repo() . "/tests/programs/$prog.pl";
    my @runs = map { fresh_profile("$prog-run$_", $src, '') } 1 .. 2;
    check_merge("$prog: two runs", @runs);
}
{
    my $parent = fresh_profile('fork', repo() . '/tests/programs/fork.pl', '');
    my @child = glob("$parent.*");
    is scalar(@child), 1, 'fork: the child wrote its own profile';
    check_merge('fork: parent and child', $parent, @child);
}
check_merge('evals.out three times', map { copy_of("$td/evals.out") } 1 .. 3);
check_merge('demo.pl with calls=2 and calls=1', "$td/demo-calls2.out", "$td/demo.out");
check_merge('blocks=1', "$td/demo-blocks.out", copy_of("$td/demo-blocks.out"));
check_merge('demo.pl with blocks=1 and blocks=0', "$td/demo-blocks.out", "$td/demo.out");
check_merge('anon.pl twice and recursion.pl', "$td/anon.out", copy_of("$td/anon.out"), "$td/recursion.out");
check_merge('utf8 names', "$td/utf8-names.out", copy_of("$td/utf8-names.out"));
check_merge('tricky strings', "$td/tricky-strings.out", "$td/tricky-strings-compress0.out");
{
    my @e = map { fresh_profile("evals-calls2-$_", repo() . '/tests/programs/evals-loop.pl', 'calls=2:blocks=1') } 1, 2;
    my ($m) = check_merge('evals-heavy, calls=2 and blocks=1', @e, copy_of($e[0]));
    my $ent = () = (run_cmd([$nytp, 'dump', '--tags=SUB_ENTRY', $m]))[1] =~ /^SUB_ENTRY\t/mg;
    my $ent1 = () = (run_cmd([$nytp, 'dump', '--tags=SUB_ENTRY', $e[0]]))[1] =~ /^SUB_ENTRY\t/mg;
    ok $ent1 > 0, "calls=2: the input has SUB_ENTRY events ($ent1)";
    is $ent, 2 * $ent1 + (() = (run_cmd([$nytp, 'dump', '--tags=SUB_ENTRY', $e[1]]))[1] =~ /^SUB_ENTRY\t/mg),
        'calls=2: the merged file keeps every SUB_ENTRY event';
}

# ---- a file merged with itself: every count and time doubled -------------------

{
    my $f = "$td/recursion.out";
    my $m = "$dir/self.out";
    my ($st, undef, $err) = run_cmd([$nytp, 'merge', '-o', $m, $f, copy_of($f)]);
    is $st, 0, 'self: exit 0' or diag $err;
    my (undef, $one) = run_cmd([$nytp, 'dump', '--data', $f]);
    my (undef, $two) = run_cmd([$nytp, 'dump', '--data', $m]);
    # what doubling the counts and times of the input gives
    my $d = sub { my $v = shift; return 2 * $v };
    my @want;
    for (split /\n/, $one) {
        next if /^attribute\t(profiler_|basetime|application|complete)/;
        s/^(fid_\w+_time\t\d+\t\d+\t\[ )(\S+) (-?\d+)/$1 . $d->($2) . ' ' . $d->($3)/e;
        s/^(attribute\t(?:total_\w+|cumulative_overhead_ticks)\t)(\S+)$/$1 . $d->($2)/e;
        s/(\[ )(\d+) (\S+) (\S+) 0 0 (\S+) (\d+ )/$1 . join(' ', map { $d->($_) } $2, $3, $4) . " 0 0 " . $d->($5) . " $6"/e;
        s/( calls )(\d+) times (\S+) (\S+) (\d+) (\S+) \]$/$1 . join(' ', $d->($2), 'times', $d->($3), $d->($4), $5, $d->($6)) . ' ]'/e;
        push @want, $_;
    }
    my @got = grep { !/^attribute\t(profiler_|basetime|application|complete)/ } split /\n/, $two;
    is scalar(@got), scalar(@want), 'self: the same entries';
    my $bad = 0;
    for my $i (0 .. $#want) {
        my @a = split /(-?\d[\d.]*(?:e[-+]\d+)?)/, $want[$i];
        my @b = split /(-?\d[\d.]*(?:e[-+]\d+)?)/, $got[$i] // '';
        my $same = @a == @b;
        for my $k (0 .. $#a) {
            last unless $same;
            $same = $k % 2 ? num_eq($a[$k], $b[$k]) : $a[$k] eq $b[$k];
        }
        $bad++, diag("self: got $got[$i], want $want[$i]") if !$same && $bad < 10;
    }
    is $bad, 0, 'self: every count and time doubled, everything else the same';
    my %l1 = map { /^fid_line_time\t(\d+\t\d+)\t\[ (\S+) (-?\d+) \]$/ ? ($1 => [$2, $3]) : () } split /\n/, $one;
    my %l2 = map { /^fid_line_time\t(\d+\t\d+)\t\[ (\S+) (-?\d+) \]$/ ? ($1 => [$2, $3]) : () } split /\n/, $two;
    is_deeply [sort keys %l2], [sort keys %l1], 'self: the same lines';
    my $badl = grep { $l2{$_}[1] != 2 * $l1{$_}[1] || !num_eq($l2{$_}[0], 2 * $l1{$_}[0]) } keys %l1;
    is $badl, 0, 'self: each line count and time exactly doubled';
    my $ret1 = () = (run_cmd([$nytp, 'dump', '--tags=SUB_RETURN', $f]))[1] =~ /^SUB_RETURN\t/mg;
    my $ret2 = () = (run_cmd([$nytp, 'dump', '--tags=SUB_RETURN', $m]))[1] =~ /^SUB_RETURN\t/mg;
    ok $ret1 > 0, "self: the input has SUB_RETURN events ($ret1)";
    is $ret2, 2 * $ret1, 'self: the merged file keeps every SUB_RETURN event';
}

# ---- truncated inputs --------------------------------------------------------------

{
    my $cut = "$td/broken/trunc-plain-boundary.out";
    my $m = "$dir/trunc.out";
    my ($st, undef, $err) = run_cmd([$nytp, 'merge', '-o', $m, $cut, "$td/demo-compress0.out"]);
    is $st, 0, 'truncated: exit 0';
    like $err, qr/^nytp merge: warning: \Q$cut\E: truncated at offset \d+.*merged everything before the cut\n\z/,
        'truncated: one warning naming the file and offset';
    ok -s $m, 'truncated: the output is written';
    my ($ost, $odump, $oerr) = oracle($m);
    is $ost, 0, 'truncated: Devel::NYTProf::Data loads it';
    my ($tst) = run_cmd(['nytprofmerge', '-o', "$dir/trunc-theirs.out", $cut, "$td/demo-compress0.out"]);
    my (undef, $tdump) = oracle("$dir/trunc-theirs.out");
    same_aggregate(normalize($odump), normalize($tdump), 'truncated: the same aggregate as nytprofmerge',
                   skip => qr/^attribute\ttotal_stmts_discounted$/, carry => 1);
    # alone, the result is as incomplete as its input
    my $alone = "$dir/trunc-alone.out";
    run_cmd([$nytp, 'merge', '-o', $alone, $cut]);
    my ($ast, $adump) = oracle($alone);
    is $ast, 0, 'truncated alone: Devel::NYTProf::Data loads it';
    like $adump, qr/^attribute\tcomplete\t\n/m, 'truncated alone: marked incomplete';
    my (undef, $cdump) = oracle($cut);
    same_aggregate(normalize($adump), normalize($cdump), 'truncated alone: the aggregate of the input');

    unlink $m;
    my ($sst, $sout, $serr) = run_cmd([$nytp, 'merge', '--strict', '-o', $m, "$td/demo.out", $cut]);
    is $sst, 1, 'truncated --strict: exit 1';
    like $serr, qr/^nytp merge: \Q$cut\E: truncated at offset \d+/, 'truncated --strict: an error naming the file';
    ok !-e $m, 'truncated --strict: no output file';
    my ($zst, undef, $zerr) = run_cmd([$nytp, 'merge', '-o', $m, "$td/broken/trunc-z-middle.out"]);
    is $zst, 0, 'cut inside the zlib stream: exit 0';
    like $zerr, qr/warning: .*trunc-z-middle\.out: truncated/, 'cut inside the zlib stream: a warning';
}

# ---- corrupt inputs and other major versions -------------------------------------

for my $name (qw(bad-tag bad-zlib string-past-end nv-size-4 empty random bad-magic major4 major6)) {
    my $file = "$td/broken/$name.out";
    my $odir = "$dir/corrupt-$name";
    mkdir $odir;
    my ($st, $out, $err) = run_cmd([$nytp, 'merge', '-o', "$odir/m.out", "$td/demo.out", $file]);
    is $st, 1, "$name: exit 1";
    my @errors = grep { !/: warning: / } split /\n/, $err;
    is scalar(@errors), 1, "$name: one error line" or diag $err;
    like $errors[0] // '', qr/^nytp merge: \Q$file\E: /, "$name: names the file";
    opendir my $dh, $odir or die;
    my @left = grep { !/^\.\.?\z/ } readdir $dh;
    is_deeply \@left, [], "$name: no output file left";
}
{
    my ($st, undef, $err) = run_cmd([$nytp, 'merge', '-o', "$dir/m.out", "$td/broken/major6.out"]);
    like $err, qr/version/i, 'another major version: refused, saying why';
    my ($ust, undef, $uerr) = run_cmd([$nytp, 'merge']);
    is $ust, 2, 'no input: usage error';
    my ($mst, undef, $merr) = run_cmd([$nytp, 'merge', '-o', "$dir/m.out", "$dir/does-not-exist.out"]);
    is $mst, 1, 'missing input: exit 1';
    like $merr, qr/does-not-exist\.out/, 'missing input: names it';
}

# ---- inputs that disagree ---------------------------------------------------------

sub variant {
    my ($name, $re, $to) = @_;
    open my $in, '<:raw', "$td/demo-compress0.out" or die;
    my $b = do { local $/; <$in> };
    $b =~ s/$re/$to/m or die "$name: no match";
    my $g = "$dir/$name.out";
    open my $o, '>:raw', $g or die;
    print $o $b;
    close $o;
    return $g;
}
{
    my $base = "$td/demo-compress0.out";
    my $pv = variant('perl-5.99', qr/^:perl_version=5\.36\.0$/m, ':perl_version=5.99.0');
    my $ck = variant('clock-4', qr/^:clock_id=1$/m, ':clock_id=4');
    my $tp = variant('tps-20M', qr/^:ticks_per_sec=10000000$/m, ':ticks_per_sec=20000000');
    my ($st, undef, $err) = run_cmd([$nytp, 'merge', '-o', "$dir/disagree.out", $base, $pv, $ck, $tp]);
    is $st, 0, 'disagreeing inputs: still merged';
    like $err, qr/^nytp merge: warning: inputs disagree on perl_version: 5\.36\.0 in \Q$base\E, 5\.99\.0 in \Q$pv\E$/m,
        'perl_version: a warning with both files and values';
    like $err, qr/^nytp merge: warning: inputs disagree on clock_id: 1 in \Q$base\E, 4 in \Q$ck\E$/m,
        'clock_id: a warning with both files and values';
    like $err, qr/^nytp merge: warning: inputs disagree on ticks_per_sec: 10000000 in \Q$base\E, 20000000 in \Q$tp\E/m,
        'ticks_per_sec: a warning with both files and values';
    # the ticks of the 20 MHz input are converted: half the time
    my ($s1, $one) = run_cmd([$nytp, 'merge', '-o', "$dir/tps.out", $base, $tp]);
    my (undef, $m) = oracle("$dir/tps.out");
    my (undef, $b) = oracle($base);
    my ($dm) = $m =~ /^attribute\ttotal_stmts_duration\t(\S+)$/m;
    my ($db) = $b =~ /^attribute\ttotal_stmts_duration\t(\S+)$/m;
    # (each line's converted ticks are rounded once: 2e-3 is far from 2.0)
    ok abs($dm - 1.5 * $db) < 2e-3 * $db, "ticks_per_sec: ticks converted ($dm = 1.5 x $db)";
}

# ---- ticks that a statement cannot hold (issue 21) --------------------------------------
# A 1,000 s statement of a ticks_per_sec=1 profile merged into a 10 MHz
# one is 10^10 ticks: merge kept INT32_MAX of them (429.5 s).  Now the
# rest go into more statements, each discounted, so the count is kept.
{
    my $gen = repo() . '/build/gen-profile';
    system($gen, 'slow-clock', 1000, "$dir/slow.out") == 0 or die 'gen-profile';
    system($gen, 'fid0', 5, "$dir/fast.out") == 0 or die 'gen-profile';
    system($gen, 'slow-clock', 2147483647, "$dir/slowest.out") == 0 or die 'gen-profile';
    system($gen, 'slow-clock', 100000000, "$dir/slower.out") == 0 or die 'gen-profile';
    my $lines = sub {
        my ($file) = @_;
        my ($st, $out, $err) = run_cmd([$^X, '-e', <<'PERL', $file]);
use strict; use warnings; use Devel::NYTProf::Data;
$SIG{__WARN__} = sub { print STDERR "WARN: @_" };
my $p = Devel::NYTProf::Data->new({ filename => shift, quiet => 1 });
my $d = $p->fileinfo_of('x.pl')->line_time_data;
printf "%d %.7f %d\n", $_, @{$d->[$_]}[0, 1] for 1, 2;
PERL
        return ($st, $out, $err);
    };
    my ($st, undef, $err) = run_cmd([$nytp, 'merge', '-o', "$dir/slowm.out", "$dir/fast.out", "$dir/slow.out"]);
    is $st, 0, '10 MHz + 1 Hz: merged' or diag $err;
    my ($ost, $out, $oerr) = $lines->("$dir/slowm.out");
    is $ost, 0, '... Devel::NYTProf::Data loads it';
    is $out, "1 1000.0000020 2\n2 3.0000000 2\n",
        '... line 1 keeps its 1,000 s (and 2 ticks of the 10 MHz input), count 2; line 2 as it was';
    my (undef, $dump) = run_cmd([$nytp, 'dump', '--data', "$dir/slowm.out"]);
    my (undef, $sum) = run_cmd([$nytp, 'dump', '--data', "$dir/fast.out", "$dir/slow.out"]);
    my ($mt) = $dump =~ /^attribute\ttotal_stmts_duration\t(\S+)$/m;
    my ($st2) = $sum =~ /^attribute\ttotal_stmts_duration\t(\S+)$/m;
    ok defined $mt && abs($mt - $st2) < 1e-9 * $st2, "... nytp reads the same total as of both inputs ($mt, $st2)";
    # 10^8 s (three years) at 1 Hz: 10^15 ticks, 465,662 times an i32,
    # still every tick
    ($st, undef, $err) = run_cmd([$nytp, 'merge', '-o', "$dir/slowerm.out", "$dir/fast.out", "$dir/slower.out"]);
    is $st, 0, '10 MHz + a 10^8 s statement at 1 Hz: merged' or diag $err;
    ($ost, $out) = $lines->("$dir/slowerm.out");
    my ($t1, $c1) = $out =~ /^1 (\S+) (\S+)$/m;
    # (Devel::NYTProf sums 465,663 quotients: 4e-12 relative off)
    ok abs($t1 - 100000000.000002) < 1e-9 * $t1, "... Devel::NYTProf::Data: line 1 keeps 10^8 s ($t1)";
    is $c1, 2, '... count 2';
    my $ticks = sub {
        my ($file, $line) = @_;
        my (undef, $d) = run_cmd([$nytp, 'dump', '--tags=NEW_FID,TIME_LINE', $file]);
        my ($fid) = $d =~ /^NEW_FID\t(\d+)\t.*\tx\.pl$/m;
        my $sum = 0;
        $sum += $1 while $d =~ /^TIME_LINE\t(-?\d+)\t$fid\t$line$/mg;
        return $sum;
    };
    is $ticks->("$dir/slowerm.out", 1), 1e15 + 20, '... every tick: 10^15 + 20 in its TIME_LINE chunks';
    # 2^31-1 s at 1 Hz is 2.1e16 ticks at 10 MHz: past 2^53 (28.5 years),
    # where a double no longer counts single ticks; kept up to there, with
    # a warning
    ($st, undef, $err) = run_cmd([$nytp, 'merge', '-o', "$dir/slowestm.out", "$dir/fast.out", "$dir/slowest.out"]);
    is $st, 0, '10 MHz + a 2^31-1 s statement at 1 Hz: merged';
    like $err, qr/^nytp merge: warning: line 1 of file \d+ sums to 2\.14748e\+16 ticks, more than a profile can hold; kept 9007199254740992$/m,
        '... with a warning that says what was kept';
    is $ticks->("$dir/slowestm.out", 1), 9007199254740992, '... 2^53 ticks kept';
}

# ---- 1,000 inputs with 64 file descriptors ----------------------------------------------

{
    my $src = "$td/recursion.out";
    my $many = "$dir/many-inputs";
    mkdir $many;
    my @files = map { "$many/r$_.out" } 1 .. 1000;
    copy($src, $_) or die "$_: $!" for @files;
    my ($st, undef, $err) = run_cmd(['/bin/sh', '-c', 'ulimit -n 64 && exec "$@"', 'sh',
                                     $nytp, 'merge', '-o', "$dir/many.out", @files]);
    is $st, 0, '1,000 inputs under ulimit -n 64: exit 0' or diag $err;
    my (undef, $one) = run_cmd([$nytp, 'dump', '--data', $src]);
    my (undef, $all) = run_cmd([$nytp, 'dump', '--data', "$dir/many.out"]);
    my ($m1) = $one =~ /^attribute\ttotal_stmts_measured\t(\d+)$/m;
    my ($m2) = $all =~ /^attribute\ttotal_stmts_measured\t(\d+)$/m;
    is $m2, 1000 * $m1, '1,000 inputs: 1,000 times the statements';
    my ($c1) = $one =~ /^attribute\ttotal_sub_calls\t(\d+)$/m;
    my ($c2) = $all =~ /^attribute\ttotal_sub_calls\t(\d+)$/m;
    is $c2, 1000 * $c1, '1,000 inputs: 1,000 times the sub calls';
    like $all, qr/^attribute\tapplication\t\S+ \(1000 runs\)$/m, '1,000 inputs: application names the runs';
    # memory grows with distinct lines, subs and arcs, not with events:
    # 1,000 copies need about what 2 need (GNU time's peak RSS, in KB)
    if (-x '/usr/bin/time') {
        my @rss;
        for my $set ([@files], [@files[0, 1]]) {
            my (undef, undef, $terr) = run_cmd(['/usr/bin/time', '-f', 'RSS %M', $nytp, 'merge', '-o', "$dir/rss.out", @$set]);
            push @rss, $terr =~ /RSS (\d+)/ ? $1 : 0;
        }
        ok $rss[0] > 0 && $rss[0] < $rss[1] + 2048,
            "1,000 inputs: peak memory $rss[0] KB, 2 inputs: $rss[1] KB";
    }
}

# ---- the command line ----------------------------------------------------------------

{
    my ($st, $out) = run_cmd([$nytp, 'merge', '--help']);
    is $st, 0, '--help: exit 0';
    like $out, qr/^usage: nytp merge/, '--help: usage';
    like $out, qr/\Q$_\E/, "--help mentions $_" for qw(--output --strict --compress nytprof-merged.out);
    local $ENV{MANPAGER} = 'cat';
    local $ENV{PAGER} = 'cat';
    my ($hst, $hout) = run_cmd([$nytp, 'help', 'merge']);
    like $hout, qr/NYTP-MERGE/, 'help merge shows the man page';
    my ($lst, $lout) = run_cmd([$nytp, '--help']);
    like $lout, qr/^\s+merge\s/m, 'nytp --help lists merge';
    my ($cst) = run_cmd([$nytp, 'merge', '--compress=10', "$td/demo.out"]);
    is $cst, 2, '--compress=10: usage error';
    my $cwd = "$dir/cwd";
    mkdir $cwd;
    my ($dst, undef, $derr) = run_cmd([$nytp, 'merge', "$td/demo.out"], cwd => $cwd);
    is $dst, 0, 'default output: exit 0' or diag $derr;
    ok -s "$cwd/nytprof-merged.out", 'default output: nytprof-merged.out';
    my ($sst, $sout) = run_cmd([$nytp, 'merge', '-o', '-', "$td/demo.out"]);
    is $sst, 0, '-o -: exit 0';
    like $sout, qr/^NYTProf 5 0\n/, '-o -: the profile on standard output';
    my ($zst) = run_cmd([$nytp, 'merge', '--compress=0', '-o', "$dir/plain.out", "$td/demo.out", "$td/demo.out"]);
    run_cmd([$nytp, 'merge', '-o', "$dir/deflated.out", "$td/demo.out", "$td/demo.out"]);
    unlike slurp_file("$dir/plain.out"), qr/^z/m, '--compress=0: no zlib stream';
    is((oracle("$dir/plain.out"))[1], (oracle("$dir/deflated.out"))[1], '--compress=0: the same profile');
    my ($ist, $iout) = run_cmd([$nytp, 'merge', '-o', '-', '-'], stdin => slurp_file("$td/demo.out"));
    is $ist, 0, 'input -: exit 0';
    is $iout, $sout, 'input -: the same as from the file';
}

# ---- merging merges: a fleet, merged per host, then the merges -------------

{
    # the same program on four "hosts" (with string evals), and another program
    my @host1 = map { "$td/$_" } qw(demo.out demo-calls2.out evals.out);
    # host2's evals.out is a copy: a file named twice is merged once
    File::Copy::copy("$td/evals.out", "$dir/evals-host2.out") or die "copy: $!";
    my @host2 = ((map { "$td/$_" } qw(demo-compress0.out demo-savesrc0.out)), "$dir/evals-host2.out",
                 "$td/recursion.out");
    my ($st1) = run_cmd([$nytp, 'merge', '-o', "$dir/host1.out", @host1]);
    my ($st2) = run_cmd([$nytp, 'merge', '-o', "$dir/host2.out", @host2]);
    my ($st3) = run_cmd([$nytp, 'merge', '-o', "$dir/fleet.out", "$dir/host1.out", "$dir/host2.out"]);
    my ($st4) = run_cmd([$nytp, 'merge', '-o', "$dir/all.out", @host1, @host2]);
    is_deeply [$st1, $st2, $st3, $st4], [0, 0, 0, 0], 'merging per host, then the merges: exit 0';
    my (undef, $fleet) = run_cmd([$nytp, 'dump', '--data', "$dir/fleet.out"]);
    my (undef, $all) = run_cmd([$nytp, 'dump', '--data', "$dir/all.out"]);
    ok length $all, 'the loaded profile is there';
    is $fleet, $all, 'merge is associative: the merge of per-host merges = the merge of all inputs';
    like $fleet, qr/^attribute\tapplication\tdemo\.pl \(4 runs\), evals\.pl \(2 runs\) and recursion\.pl$/m,
        'merging merges counts every run once';
    my (undef, $fc) = run_cmd([$nytp, 'calls', '--stable', "$dir/fleet.out"]);
    my (undef, $ac) = run_cmd([$nytp, 'calls', '--stable', "$dir/all.out"]);
    is $fc, $ac, 'merge is associative: the same call paths';
}

# Several DISCOUNTs in a row (Devel::NYTProf warns "multiple statement
# discount") change the count its loader computes: 1 - k for the line's
# first statement.  The merged profile gives the oracle the same counts,
# and the same number of discounted statements, as the input does, alone
# and twice over.
for my $k (2, 3) {
    my $in = "$dir/discounts-$k.out";
    system(repo() . '/build/gen-profile', 'discounts', $k, $in) == 0 or die;
    my (undef, $want, $werr) = oracle($in);
    like $werr, qr/multiple statement discount/, "$k DISCOUNTs in a row: the oracle warns";
    my ($st, undef, $err) = run_cmd([$nytp, 'merge', '-o', "$dir/discounts-$k-m.out", $in]);
    is $st, 0, "$k DISCOUNTs in a row: merged" or diag $err;
    is((oracle("$dir/discounts-$k-m.out"))[1], $want, "$k DISCOUNTs in a row: the oracle's counts kept");
    # a copy: a file named twice is read once
    File::Copy::copy($in, "$in.copy") or die "copy: $!";
    run_cmd([$nytp, 'merge', '-o', "$dir/discounts-$k-mm.out", $in, "$in.copy"]);
    my (undef, $twice) = run_cmd([$nytp, 'dump', '--data', $in, "$in.copy"]);
    my (undef, $mtwice) = oracle("$dir/discounts-$k-mm.out");
    s/^attribute\t(?:basetime|profiler_(?:start|end)_time|profiler_duration|application)\t.*\n//mg for $twice, $mtwice;
    is $mtwice, $twice, "$k DISCOUNTs in a row, twice: the oracle's counts of the merge are the sums";
}

# Warnings about a chunk say where it is; far block and sub lines are
# merged; a file declared with
# id 0, which Devel::NYTProf and every other command read, is merged too.
{
    my $gen = repo() . '/build/gen-profile';
    my $f = "$dir/undeclared.out";
    system($gen, 'undeclared', 7, $f) == 0 or die;
    my $at = index(slurp_file($f), "\@\x02\x07\x03"); # NEW_FID 2, run in 7 at line 3
    my ($st, undef, $err) = run_cmd([$nytp, 'merge', '-o', "$dir/undeclared-m.out", $f]);
    is $st, 0, 'undeclared file id: merged';
    like $err, qr/^nytp merge: warning: \Q$f\E: at offset ${\($at - 4)}, chunk 6: statements in file id 7, which was never declared, are left out$/m,
        'merge: a statement warning names its offset and chunk';
    like $err, qr/^nytp merge: warning: \Q$f\E: at offset $at, chunk 7: string eval .* names an unknown parent file id 7; treated as a file$/m,
        'merge: an eval warning names its offset and chunk';

    # block and sub lines far beyond the others are taken, as every
    # reader takes them (merge refused lines from 2^26 on)
    {
        my $bl = "$dir/block-lines.out";
        system($gen, 'block-lines', 70_000_000, $bl) == 0 or die;
        my ($bst, undef, $berr) = run_cmd([$nytp, 'merge', '-o', "$dir/bl-m.out", $bl]);
        is $bst, 0, 'block line 70000000, sub line 70000001: merged' or diag $berr;
        my (undef, $in) = run_cmd([$nytp, 'dump', '--data', $bl]);
        my (undef, $out) = run_cmd([$nytp, 'dump', '--data', "$dir/bl-m.out"]);
        my @want = $in =~ /^(fid_(?:block|sub)_time\t.*)$/mg;
        my @got = $out =~ /^(fid_(?:block|sub)_time\t.*)$/mg;
        ok scalar(grep { /\t70000000\t/ } @want) && scalar(grep { /\t70000001\t/ } @want), 'the input has the far block and sub lines';
        is_deeply \@got, \@want, 'merged: the block and sub lines as the input reads';
    }

    my $z = "$dir/fid0.out";
    system($gen, 'fid0', 30, $z) == 0 or die;
    File::Copy::copy($z, "$z.copy") or die "copy: $!";
    ($st, undef, $err) = run_cmd([$nytp, 'merge', '-o', "$dir/fid0-m.out", $z, "$z.copy"]);
    is $st, 0, 'file id 0: merged' or diag $err;
    is $err, '', 'file id 0: no message';
    my (undef, $d) = run_cmd([$nytp, 'dump', '--data', $z, "$z.copy"]);
    my (undef, $md) = oracle("$dir/fid0-m.out");
    my %want = map { /^fid_line_time\t(\d+)\t(\d+)\t(.*)$/ ? ("$1:$2" => $3) : () } split /\n/, $d;
    my %got = map { /^fid_line_time\t(\d+)\t(\d+)\t(.*)$/ ? ("$1:$2" => $3) : () } split /\n/, $md;
    my %name_d = map { /^fid_fileinfo\t(\d+)\t\[ (\S+) / ? ($1 => $2) : () } split /\n/, $d;
    my %name_m = map { /^fid_fileinfo\t(\d+)\t\[ (\S+) / ? ($1 => $2) : () } split /\n/, $md;
    my %by_name_d = map { my ($fid, $l) = split /:/; ("$name_d{$fid}:$l" => $want{$_}) } keys %want;
    my %by_name_m = map { my ($fid, $l) = split /:/; ("$name_m{$fid}:$l" => $got{$_}) } keys %got;
    is_deeply \%by_name_m, \%by_name_d, 'file id 0: its statements merged, as the inputs read';
    ok exists $by_name_m{'zero.pl:2'}, 'file id 0: its lines are there';
}

# ---- many inputs under a small open-file limit ----------------------------

# Besides the 1,000 copies of one file above: 300 inputs of three different
# profiles of demo.pl (100 copies of each) under `ulimit -n 64`; merging
# them all at once gives the profile that merging each half and then the
# two halves gives (merge is associative; the sub call times, which the
# format holds as doubles, to 9 significant digits: the sums are rounded
# in another order), and every line count is 100 times the three inputs'
# sum.
{
    my @kinds = map { "$td/$_" } qw(demo.out demo-calls2.out demo-compress0.out);
    my $many = "$dir/mixed-inputs";
    mkdir $many or die "$many: $!";
    my @inputs;
    for my $i (1 .. 100) {
        for my $k (0 .. $#kinds) {
            my $f = sprintf '%s/p%03d-%d.out', $many, $i, $k;
            File::Copy::copy($kinds[$k], $f) or die "copy: $!";
            push @inputs, $f;
        }
    }
    my $limited = sub { ['sh', '-c', 'ulimit -n 64 && exec "$@"', 'sh', @_] };
    my ($st, undef, $err) = run_cmd($limited->($nytp, 'merge', '-o', "$dir/many-all.out", @inputs));
    is $st, 0, '300 inputs under ulimit -n 64: merged' or diag $err;
    is $err, '', '300 inputs under ulimit -n 64: no message';
    my ($s1) = run_cmd($limited->($nytp, 'merge', '-o', "$dir/many-h1.out", @inputs[0 .. 149]));
    my ($s2) = run_cmd($limited->($nytp, 'merge', '-o', "$dir/many-h2.out", @inputs[150 .. 299]));
    my ($s3) = run_cmd([$nytp, 'merge', '-o', "$dir/many-halves.out", "$dir/many-h1.out", "$dir/many-h2.out"]);
    is_deeply [$s1, $s2, $s3], [0, 0, 0], '300 inputs: each half, then the halves: merged';
    my (undef, $all) = run_cmd([$nytp, 'dump', '--data', "$dir/many-all.out"]);
    my (undef, $halves) = run_cmd([$nytp, 'dump', '--data', "$dir/many-halves.out"]);
    ok length $all, '300 inputs: the merged profile loads';
    s/(\d\.\d+(?:e-?\d+)?)/sprintf '%.9g', $1/ge for $all, $halves;
    is $halves, $all, '300 inputs: the merge of the two halves = the merge of all (associative)';
    my (undef, $three) = run_cmd([$nytp, 'dump', '--data', @kinds]);
    my $counts = sub {
        my %c;
        for (split /\n/, shift) {
            $c{"$1:$2"} = $3 if /^fid_line_time\t(\d+)\t(\d+)\t\[ \S+ (\d+) \]$/;
        }
        return \%c;
    };
    my $want = $counts->($three);
    ok scalar(keys %$want), '300 inputs: the inputs have line counts';
    is_deeply $counts->($all), { map { $_ => 100 * $want->{$_} } keys %$want },
        '300 inputs: every line count is 100 times the three inputs\' sum';
}

# ---- the deflater of the output -------------------------------------------

# ISA-L where the build has it (as the profiler), zlib with
# NYTP_DEFLATE=zlib; an unknown one is a usage error and leaves no file.
{
    my @in = ("$td/demo.out", copy_of("$td/demo.out"));
    my %out;
    for my $d ('', 'zlib', 'isal') {
        local $ENV{NYTP_DEFLATE} = $d;
        my $o = "$dir/deflater-" . ($d || 'default') . '.out';
        my ($st, undef, $err) = run_cmd([$nytp, 'merge', '-o', $o, @in]);
        $out{$d} = $st == 0 ? slurp_file($o) : undef;
        is $st, 0, 'NYTP_DEFLATE=' . ($d || '(unset)') . ': merged' or diag $err
            unless $d eq 'isal' && $err =~ /unknown deflater 'isal'/;
    }
    if (defined $out{isal}) {
        is $out{''}, $out{isal}, 'the output is deflated with ISA-L by default (this build has it)';
        isnt $out{''}, $out{zlib}, 'NYTP_DEFLATE=zlib deflates with zlib';
    } else {
        is $out{''}, $out{zlib}, 'the output is deflated with zlib by default (this build has no ISA-L)';
    }
    is((oracle("$dir/deflater-default.out"))[1], (oracle("$dir/deflater-zlib.out"))[1],
       'ISA-L or zlib: the same profile');
    local $ENV{NYTP_DEFLATE} = 'bogus';
    my ($st, undef, $err) = run_cmd([$nytp, 'merge', '-o', "$dir/deflater-bogus.out", @in]);
    is $st, 2, 'NYTP_DEFLATE=bogus: exit 2';
    like $err, qr/^nytp merge: NYTP_DEFLATE: unknown deflater 'bogus'[^\n]*\n\z/, 'NYTP_DEFLATE=bogus: one line';
    ok !-e "$dir/deflater-bogus.out", 'NYTP_DEFLATE=bogus: no output';
}

done_testing;
