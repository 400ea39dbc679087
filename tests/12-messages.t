#!/usr/bin/perl
# Messages on stderr never pass a terminal control byte through: file and
# sub names come from profiles (and from the command line), and a name
# holding ESC [ 31 m or an OSC sequence (ESC ] 0 ; title BEL) would drive
# the terminal.  Control bytes are shown as strnvis writes them (\033,
# \a), UTF-8 text is left readable.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;

my $nytp = nytp();
my $dir = scratch_dir();
my $evil = "\e[31mred\e]0;pwned\a";
my $shown = '\\033[31mred\\033]0;pwned\\a';   # what a message shows instead

# A profile whose sub and file names hold the sequences (a string eval's
# #line names a file that is not on disk, so csv and html warn about it).
my $prof = fresh_profile('esc', <<"EOT", 'savesrc=0');
use Sub::Util qw(set_subname);
my \$s = set_subname("main::\\e[31mred\\e]0;pwned\\a", sub { my \$x = 0; \$x += \$_ for 1..10; \$x });
\$s->();
eval qq{#line 1 "\\e[31mfile\\e]0;pwned\\a.pl"\\nsub in_esc { 1 } in_esc(); \\\$s->(); 1} or die \$@;
EOT

# The same profile cut short, under a name that holds the sequences too:
# every command that reads it warns, naming the file.
open my $in, '<:raw', $prof or die;
my $bytes = do { local $/; <$in> };
close $in;
my $cut = "$dir/$evil.out";
open my $o, '>:raw', $cut or die;
print $o substr($bytes, 0, int(length($bytes) * 0.8));
close $o;

sub no_raw_escape {
    my ($err, $what) = @_;
    unlike $err, qr/[\x00-\x09\x0b-\x1f\x7f]/, "$what: no control byte but the newline on stderr";
    my @bad = grep { !/^nytp[ :]/ } split /\n/, $err;
    is_deeply \@bad, [], "$what: every line of stderr is a message of its own";
}

my @commands = (
    ['dump'], ['dump', '--data'], ['calls'], ['flame'], ['flame', '--svg'],
    ['cachegrind', '-o', "$dir/cg.out"], ['merge', '-o', "$dir/merged.out"],
    ['html', '-o', "$dir/html"], ['csv', '-o', "$dir/csv"],
);
for my $c (@commands) {
    my ($st, $out, $err) = run_cmd([$nytp, @$c, $cut]);
    my $what = "@$c on a cut profile";
    like $err, qr/\Q$shown\E\.out/, "$what: the file name is shown escaped";
    no_raw_escape($err, $what);
    unlike $err, qr/\e/, "$what: no ESC byte";
}

# Names from inside the profile: csv and html cannot find the eval's file.
for my $c (['csv', '-o', "$dir/csv2"], ['html', '-o', "$dir/html2"]) {
    my ($st, $out, $err) = run_cmd([$nytp, @$c, $prof]);
    is $st, 0, "@$c: exit 0";
    like $err, qr/\\033\[31mfile\\033\]0;pwned\\a\.pl/, "@$c: the missing file is named, escaped"
        if $c->[0] eq 'csv';
    no_raw_escape($err, "@$c");
}

# Names holding LF, TAB, CR and ESC, each followed by text made to look
# like a message of its own: every warning stays one line, the bytes
# escaped (strnvis leaves LF and TAB alone unless told).
{
    my $ctl = "$dir/ctl.out";
    system(repo() . '/build/gen-profile', 'control-names', 3, $ctl) == 0 or die 'gen-profile failed';
    for my $c (['top'], ['html', '-o', "$dir/ctl-html"], ['csv', '-o', "$dir/ctl-csv"],
               ['speedscope', '-o', "$dir/ctl.json"], ['pprof', '-o', "$dir/ctl.pb"],
               ['diff', $ctl], ['merge', '-o', "$dir/ctl-merged.out"]) {
        my ($st, $out, $err) = run_cmd([$nytp, @$c, $ctl]);
        my $what = "@$c on names with LF and TAB";
        is $st, 0, "$what: exit 0" or diag $err;
        like $err, qr/declared again, as again\\nnytp top: warning: forged\\t\\r\\033\]0;t\\a\.pl \(it was ctl\\nnytp top: fake line\\t\\r\\033\[2J\.pl\)\n/,
            "$what: the redeclared file's names are escaped, on one line" unless $c->[0] eq 'merge';
        like $err, qr/calls of main::ctl\\nnytp top: forged\\t\\r\\033\[31m from file id 9, which was never declared/,
            "$what: the sub's name is escaped, on one line" if $c->[0] eq 'merge';
        like $err, qr/string eval \(eval 1\)\[ctl\\nnytp top: forged\\t\\r\\033\[2J:1\] \(file id 2\) names an unknown parent/,
            "$what: the eval's name is escaped, on one line";
        no_raw_escape($err, $what);
    }
    my ($st, $out, $err) = run_cmd([$nytp, 'dump', "$dir/no\nnytp dump: forged\tline.out"]);
    is $st, 1, 'a missing file whose name holds LF: exit 1';
    like $err, qr{/no\\nnytp dump: forged\\tline\.out: }, '... named escaped';
    no_raw_escape($err, 'a missing file whose name holds LF');
}

# Warnings are capped: 200,000 of a kind are the first 10 and one line
# at the end with the count of the rest, on every command that loads a
# profile (before, 200,000 lines: a 39 KB file wrote 348 MB to stderr).
{
    my $n = 200_000;
    for my $k (['pid-end-unstarted', qr/process 7 ends without having started/],
               ['fid-again', qr/file id 1 declared again, as x\.pl \(it was x\.pl\)/]) {
        my ($kind, $re) = @$k;
        my $f = "$dir/$kind.out";
        system(repo() . '/build/gen-profile', $kind, $n, $f) == 0 or die 'gen-profile failed';
        for my $c (['top'], ['html', '-o', "$dir/$kind-html"], ['diff', $f], ['dump', '--data'],
                   ['speedscope', '-o', "$dir/$kind.json"], ['pprof', '-o', "$dir/$kind.pb"],
                   ['cachegrind', '-o', "$dir/$kind.cg"], ['csv', '-o', "$dir/$kind-csv"],
                   ['flame', '--svg']) {
            my ($st, $out, $err) = run_cmd([$nytp, @$c, $f]);
            my $what = "@$c on $n warnings of one kind ($kind)";
            is $st, 0, "$what: exit 0";
            my @lines = split /\n/, $err;
            cmp_ok scalar(@lines), '<=', 14, "$what: a few lines of stderr" or diag scalar(@lines);
            my $more = $c->[0] eq 'diff' ? 2 * $n - 10 : $n - 10;   # diff reads it twice
            my @shown = grep { /^nytp \S+: warning: \Q$f\E: at offset \d+, chunk \d+: $re$/ } @lines;
            my @sum = grep { /^nytp \S+: warning: \.\.\. and $more more warnings like this: \Q$f\E: .*$re$/ } @lines;
            if ($c->[0] eq 'flame') {   # flame reads the call tree only: nothing to say
                is scalar(@shown) + scalar(@sum), 0, "$what: no such warning";
                next;
            }
            is scalar(@shown), 10, "$what: the first 10 shown";
            is scalar(@sum), 1, "$what: then one line with the count of the rest ($more)";
            like $lines[-1], qr/\.\.\. and $more more/, "$what: the count comes last";
        }
    }
}

# A sub name in a tmon.out: the run was cut with the sub still running.
my $tmon = "$dir/esc.tmon";
open my $t, '>:raw', $tmon or die;
print $t "#fOrTyTwO\n\$hz=100;\n\$XS_VERSION='DProf 20110802.00';\n",
    "\$over_utime=0; \$over_stime=0; \$over_rtime=0;\n\$over_tests=10000;\n",
    "\$rrun_utime=1; \$rrun_stime=0; \$rrun_rtime=1;\n\$total_marks=2\n\nPART2\n",
    "& 2 main $evil\n+ 2\n";
close $t;
my ($st, $out, $err) = run_cmd([$nytp, 'dprof-convert', '-o', "$dir/esc.nytprof", $tmon]);
like $err, qr/\Q$shown\E/, 'dprof-convert: the running sub is named, escaped';
no_raw_escape($err, 'dprof-convert');

# Command-line words in usage errors and 'nytp help'.
for my $argv ([$nytp, "\e[2J"], [$nytp, 'dump', "--\e[2J"], [$nytp, 'help', "\e[2J"],
              [$nytp, 'dump', "$dir/\e[2Jmissing.out"]) {
    ($st, $out, $err) = run_cmd($argv);
    isnt $st, 0, 'a bad word: an error';
    like $err, qr/\\033\[2J/, 'the word is shown escaped';
    no_raw_escape($err, 'a bad word');
}

# UTF-8 stays readable; a byte that is not UTF-8 and a C1 control do not.
($st, $out, $err) = run_cmd([$nytp, 'dump', "$dir/caf\xc3\xa9-\xe2\x82\xac.out"]);
like $err, qr{/caf\xc3\xa9-\xe2\x82\xac\.out}, 'UTF-8 file names are shown as they are';
($st, $out, $err) = run_cmd([$nytp, 'dump', "$dir/\x9b31m-\xc2\x9b31m.out"]);
my $c1 = '\\23331m-\\302\\23331m.out';
like $err, qr{/\Q$c1\E}, 'a lone 0x9B and U+009B (CSI) are escaped';

# Where a user is lost: the wrong kind of file.  Every command that reads
# a profile says what the file is and what to do.
{
    my $td = testdata();
    my $demo = "$td/demo.out";
    my $gz = "$dir/demo.out.gz";
    system("gzip -c '$demo' > '$gz'") == 0 or die;
    my $tmon = "$td/dprof/many.tmon";
    my @readers = (['dump'], ['dump', '--data'], ['calls'], ['flame'], ['cachegrind', '-o', "$dir/x.cg"],
                   ['merge', '-o', "$dir/x.out"], ['html', '-o', "$dir/x-html"], ['csv', '-o', "$dir/x-csv"]);
    for my $c (@readers) {
        my ($st, $out, $err) = run_cmd([$nytp, @$c, $gz]);
        is $st, 1, "@$c on a gzipped profile: exit 1";
        like $err, qr/^nytp \S+: \Q$gz\E: .*this is a gzip file: gunzip it first\n\z/,
            "@$c on a gzipped profile: says gunzip";
        ($st, $out, $err) = run_cmd([$nytp, @$c, $tmon]);
        is $st, 1, "@$c on a tmon.out: exit 1";
        like $err, qr/^nytp \S+: \Q$tmon\E: .*this is a Devel::DProf tmon\.out: convert it with 'nytp dprof-convert'\n\z/,
            "@$c on a tmon.out: says nytp dprof-convert";
    }
    # a pprof profile (nytp pprof's output) is a gzip file too: named for what it is
    my $pb = "$dir/demo.pb.gz";
    my ($pst, undef, $perr) = run_cmd([$nytp, 'pprof', '-o', $pb, $demo]);
    is $pst, 0, 'pprof: exit 0' or diag $perr;
    for my $c (['html', '-o', "$dir/pb-html"], ['dump'], ['calls'], ['csv', '-o', "$dir/pb-csv"]) {
        my ($st, $out, $err) = run_cmd([$nytp, @$c, $pb]);
        is $st, 1, "@$c on a pprof profile: exit 1";
        like $err, qr/^nytp \S+: \Q$pb\E: .*this is a pprof profile \(gzipped protobuf, as 'nytp pprof' writes\), which nytp cannot read: open it with 'go tool pprof'\n\z/,
            "@$c on a pprof profile: says it is one, not 'gunzip it first'";
    }
    my ($sst, undef, $serr) = run_cmd([$nytp, 'dump', '-'], stdin => slurp_file($pb));
    like $serr, qr/this is a pprof profile/, 'a pprof profile on standard input: the same';
    my $renamed = "$dir/demo-copy.pb.gz";
    system("gzip -c '$demo' > '$renamed'") == 0 or die;
    my (undef, undef, $rerr) = run_cmd([$nytp, 'dump', $renamed]);
    like $rerr, qr/this is a gzip file: gunzip it first/, 'a gzipped NYTProf profile named .pb.gz: gunzip it';

    my ($st, $out, $err) = run_cmd([$nytp, 'dprof-convert', '-o', "$dir/y.out", $demo]);
    is $st, 1, 'dprof-convert on a profile: exit 1';
    like $err, qr/this is an NYTProf profile already/, '... says it is one already';
    system("gzip -c '$tmon' > '$dir/many.tmon.gz'") == 0 or die;
    ($st, $out, $err) = run_cmd([$nytp, 'dprof-convert', '-o', "$dir/y.out", "$dir/many.tmon.gz"]);
    is $st, 1, 'dprof-convert on a gzipped tmon.out: exit 1';
    like $err, qr/this is a gzip file: gunzip it first/, '... says gunzip';

    # A killed DProf run: the file ends inside a line, with subs running.
    my $bytes = slurp_file($tmon);
    my $cut = int(length($bytes) * 0.6);
    $cut++ while substr($bytes, $cut, 1) eq "\n" || substr($bytes, $cut - 1, 1) eq "\n";
    my ($mid, $line) = ("$dir/killed.tmon", "$dir/killed-at-line.tmon");
    for ([$mid, substr($bytes, 0, $cut)], [$line, substr($bytes, 0, rindex($bytes, "\n", $cut) + 1)]) {
        open my $fh, '>:raw', $_->[0] or die;
        print $fh $_->[1];
        close $fh;
    }
    for my $f ($mid, $line) {
        ($st, $out, $err) = run_cmd([$nytp, 'dprof-convert', '-o', "$dir/k.out", $f]);
        is $st, 1, "a killed run ($f): exit 1 without -F";
        like $err, qr/^nytp dprof-convert: \Q$f\E: line \d+: .*\(a killed run: -F ends the subs still running/,
            '... and the message suggests -F';
        ok !-e "$dir/k.out", '... and writes nothing';
    }
    ($st, $out, $err) = run_cmd([$nytp, 'dprof-convert', '-F', '-o', "$dir/k-mid.out", $mid]);
    is $st, 0, '-F on a run killed inside a line: exit 0' or diag $err;
    like $err, qr/^nytp dprof-convert: warning: \Q$mid\E: line \d+ is cut short \(the run was killed\); the records before it are converted\n\z/,
        '... one warning naming the cut line';
    ($st, $out, $err) = run_cmd([$nytp, 'dprof-convert', '-F', '-o', "$dir/k-line.out", $line]);
    is $st, 0, '-F on the same run cut at the line before: exit 0';
    is $err, '', '... without a warning';
    my $strip = sub {
        my $d = (run_cmd([$nytp, 'dump', '--data', shift]))[1];
        $d =~ s/^attribute\t(application|basetime|profiler_\w+_time)\t.*\n//mg;
        $d =~ s/dprof:\S+/dprof:X/g;
        return $d;
    };
    is $strip->("$dir/k-mid.out"), $strip->("$dir/k-line.out"),
        '... both give the same profile: the cut line is left out';
}

done_testing;
