#!/usr/bin/perl
# The nytp binary's command line: help, version, unknown words, exit codes,
# input and output conventions.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;
use JSON::PP;

my $nytp = nytp();
my $demo = testdata() . '/demo.out';

my ($st, $out, $err) = run_cmd([$nytp, '--help']);
is $st, 0, '--help exits 0';
like $out, qr/^usage: nytp/m, '--help prints usage';
like $out, qr/^\s+dump\s/m, '--help lists dump';

($st, $out) = run_cmd([$nytp, '--version']);
is $st, 0, '--version exits 0';
like $out, qr/^nytp \d+\.\d+\.\d+ \(NYTProf file format 5\.0\)\n\z/, '--version says version and format';

($st, $out, $err) = run_cmd([$nytp]);
is $st, 2, 'no command: exit 2';

($st, $out, $err) = run_cmd([$nytp, 'frobnicate']);
is $st, 2, 'unknown command: exit 2';
is $err, "nytp: 'frobnicate' is not a nytp command (see 'nytp --help')\n", 'unknown command: one line';

($st, $out, $err) = run_cmd([$nytp, '--frob']);
is $st, 2, 'unknown global option: exit 2';
is scalar(() = $err =~ /\n/g), 1, 'unknown global option: one line';

($st, $out, $err) = run_cmd([$nytp, 'dump', '--frob', $demo]);
is $st, 2, 'unknown dump option: exit 2';
is $err, "nytp dump: unknown option '--frob' (see 'nytp dump --help')\n", 'unknown option: one line';
is $out, '', 'unknown option: nothing on stdout';

($st, $out, $err) = run_cmd([$nytp, 'dump', '-x', $demo]);
is $st, 2, 'unknown short option: exit 2';
is $err, "nytp dump: unknown option '-x' (see 'nytp dump --help')\n";

($st, $out, $err) = run_cmd([$nytp, 'dump', '--limit']);
is $st, 2, 'missing option value: exit 2';
like $err, qr/^nytp dump: option '--limit' needs a value/;

for my $bad ('--limit=abc', '--limit=-1', '--tags=NOPE', '--tags=TIME_LINE,,') {
    ($st, $out, $err) = run_cmd([$nytp, 'dump', $bad, $demo]);
    is $st, 2, "$bad: exit 2";
    is scalar(() = $err =~ /\n/g), 1, "$bad: one line";
}

($st, $out, $err) = run_cmd([$nytp, 'dump', $demo, $demo]);
is $st, 2, 'two files: exit 2';

($st, $out, $err) = run_cmd([$nytp, 'dump', '--help']);
is $st, 0, 'dump --help exits 0';
like $out, qr/^usage: nytp dump/, 'dump --help prints usage';
for my $opt (qw(--json --tags --limit --strict --output)) {
    like $out, qr/\Q$opt\E/, "dump --help mentions $opt";
}

{
    local $ENV{MANPAGER} = 'cat';
    local $ENV{PAGER} = 'cat';
    local $ENV{MANWIDTH} = 80;
    ($st, $out, $err) = run_cmd([$nytp, 'help', 'dump']);
    is $st, 0, 'help dump exits 0';
    like $out, qr/NYTP-DUMP/, 'help dump shows the nytp-dump man page';
    ($st, $out, $err) = run_cmd([$nytp, 'help', 'nosuch']);
    is $st, 2, 'help for an unknown command: exit 2';
}

# Default input is ./nytprof.out; '-' is standard input.
my $dir = scratch_dir();
system('cp', $demo, "$dir/nytprof.out") == 0 or die;
my ($st1, $byname) = run_cmd([$nytp, 'dump', $demo]);
($st, $out) = run_cmd([$nytp, 'dump'], cwd => $dir);
is $st, 0, 'default input: exit 0';
is $out, $byname, 'default input is ./nytprof.out';
open my $fh, '<:raw', $demo or die;
my $bytes = do { local $/; <$fh> };
($st, $out) = run_cmd([$nytp, 'dump', '-'], stdin => $bytes);
is $st, 0, 'stdin: exit 0';
is $out, $byname, "'-' reads standard input";

($st, $out, $err) = run_cmd([$nytp, 'dump', "$dir/missing.out"]);
is $st, 1, 'missing file: exit 1';
is $err, "nytp dump: $dir/missing.out: cannot open: No such file or directory\n", 'missing file: one line';

($st, $out, $err) = run_cmd([$nytp, 'dump', $dir]);
is $st, 1, 'a directory: exit 1';
is scalar(() = $err =~ /\n/g), 1, 'a directory: one line';

# --limit and --tags
($st, $out) = run_cmd([$nytp, 'dump', '--limit=5', $demo]);
is $out, join('', (split /^/, $byname)[0 .. 4]), '--limit=5 prints the first 5 lines';
($st, $out) = run_cmd([$nytp, 'dump', '--limit', '0', $demo]);
is $out, '', '--limit 0 prints nothing';
($st, $out) = run_cmd([$nytp, 'dump', '--tags=new_fid,SUB_INFO', $demo]);
my @want = grep { /^(NEW_FID|SUB_INFO)\t/ } split /^/, $byname;
is $out, join('', @want), '--tags keeps only those chunks, case-insensitively';
ok @want > 3, 'there were such chunks';
($st, $out) = run_cmd([$nytp, 'dump', '--tags=SUB_INFO', '--limit=2', $demo]);
my @subinfo = grep { /^SUB_INFO/ } @want;
is $out, join('', @subinfo[0 .. 1]), '--limit counts printed chunks, not chunks read';

# -o writes a file, atomically; a failure leaves no file.
($st, $out, $err) = run_cmd([$nytp, 'dump', '-o', "$dir/dump.txt", $demo]);
is $st, 0, '-o: exit 0';
is $out, '', '-o: nothing on stdout';
is slurp_file("$dir/dump.txt"), $byname, '-o: the same text in the file';
($st, $out, $err) = run_cmd([$nytp, 'dump', '-o', "$dir/none/dump.txt", $demo]);
is $st, 1, '-o into a missing directory: exit 1';
like $err, qr{^nytp dump: \Q$dir\E/none/dump\.txt: cannot create: No such file or directory\n\z};
($st, $out, $err) = run_cmd([$nytp, 'dump', '-o', "$dir/bad.txt", testdata() . '/broken/bad-tag.out']);
is $st, 1, '-o with corrupt input: exit 1';
ok !-e "$dir/bad.txt", '-o with corrupt input: no half-written file';
opendir my $dh, $dir or die;
is_deeply [grep { /\.tmp/ } readdir $dh], [], 'no temporary files left';

# JSON Lines: valid JSON, the same chunks and values as the text form.
($st, $out) = run_cmd([$nytp, 'dump', '--json', testdata() . '/tricky-strings.out']);
is $st, 0, '--json: exit 0';
my ($st2, $text) = run_cmd([$nytp, 'dump', testdata() . '/tricky-strings.out']);
my @j = split /\n/, $out;
my @t = split /\n/, $text;
is scalar(@j), scalar(@t), '--json: one line per chunk';
my $json = JSON::PP->new->utf8;
my $bad = 0;
for my $i (0 .. $#j) {
    my $o = eval { $json->decode($j[$i]) };
    if (!$o) { $bad++; diag "line $i is not JSON: $j[$i]"; next }
    my ($tag) = split /\t/, $t[$i];
    $bad++, diag "line $i: tag $o->{tag} vs $tag" if $o->{tag} ne $tag;
}
is $bad, 0, '--json: every line is JSON with the right tag';
my ($tl) = grep { /"tag":"TIME_LINE"/ } @j;
like $tl, qr/^\{"tag":"TIME_LINE","ticks":-?\d+,"fid":\d+,"line":\d+\}$/, 'TIME_LINE object fields';

# UTF-8 flagged strings (tag '"') keep their flag in JSON; bytes that are
# not UTF-8 become \u00XX so every line stays valid JSON.  Devel::NYTProf
# 6.12 never writes the '"' tag, so this small profile is made here.
{
    my $f = "$dir/flags.out";
    open my $pf, '>:raw', $f or die;
    print $pf "NYTProf 5 0\n", "P\x01\x00", pack('d', 1.5),
        "s\x01\"\x05caf\xc3\xa9\x02\x03",        # SUB_INFO, UTF-8 name
        "S\x01\x01'\x03a\xffb",                    # SRC_LINE, not UTF-8
        "p\x01", pack('d', 2.5);
    close $pf;
    ($st, $out, $err) = run_cmd([$nytp, 'dump', '--json', $f]);
    is $st, 0, 'hand-made profile: exit 0' or diag $err;
    my @lines = split /\n/, $out;
    is $lines[2], qq({"tag":"SUB_INFO","fid":1,"first_line":2,"last_line":3,"name":"caf\x{c3}\x{a9}","name_utf8":true}),
        'JSON: UTF-8 flag kept';
    is $lines[3], '{"tag":"SRC_LINE","fid":1,"line":1,"text":"a\\u00ffb"}', 'JSON: a stray byte is \\u00ff';
    ok eval { JSON::PP->new->utf8->decode($_); 1 }, 'valid JSON' for @lines;
    my ($ost, $oout) = run_cmd([$^X, repo() . '/tests/oracle-dump.pl', $f]);
    ($st, $out) = run_cmd([$nytp, 'dump', $f]);
    is $out, $oout, 'hand-made profile: text dump identical to the oracle';
}

# Every command that --help lists has its usage, its man page, an entry in
# nytp(1), the README and both completions: docs stay in step with code.
{
    my ($st, $out) = run_cmd([$nytp, '--help']);
    my @cmds = grep { $_ ne 'help' } $out =~ /^  (\S+)\s{2,}/mg;
    cmp_ok scalar(@cmds), '>=', 9, 'nytp --help lists the commands';
    my $root = repo();
    my $nytp1 = slurp_file("$root/man/nytp.1");
    my $readme = slurp_file("$root/README.md");
    my $bash = slurp_file("$root/completion/nytp.bash");
    my $zsh = slurp_file("$root/completion/_nytp");
    my ($bash_cmds) = $bash =~ /^_nytp_commands=\(([^)]*)\)/m;
    my %in_bash = map { $_ => 1 } split ' ', $bash_cmds // '';
    for my $c (@cmds) {
        my ($hst, $hout) = run_cmd([$nytp, $c, '--help']);
        is $hst, 0, "$c --help: exit 0";
        like $hout, qr/^usage: nytp \Q$c\E/m, "$c --help: usage line";
        ok -f "$root/man/nytp-$c.1", "$c: man/nytp-$c.1 exists";
        (my $roff = $c) =~ s/-/\\-/g;
        like $nytp1, qr/^\.B \Q$roff\E$/m, "$c: listed in nytp(1)";
        like $readme, qr/`nytp \Q$c\E/, "$c: the README describes it";
        ok $in_bash{$c}, "$c: bash completion knows it";
        like $zsh, qr/^  ["']\Q$c\E:/m, "$c: zsh completion knows it";
    }
}

# A report that cannot be written (a full disk) is one error line naming
# the output, and exit 1, for every command that writes to a stream.
SKIP: {
    skip '/dev/full is missing', 1 unless -c '/dev/full';
    my $demo = testdata() . '/demo.out';
    for my $args (['dump'], ['dump', '--data'], ['dump', '--data', '--json'], ['calls'],
                  ['flame'], ['flame', '--svg'], ['cachegrind', '-o', '-'], ['pprof', '-o', '-'],
                  ['speedscope', '-o', '-']) {
        my $label = "@$args to a full disk";
        my ($st, undef, $err) = run_cmd(['sh', '-c', 'exec "$@" > /dev/full', 'sh', $nytp, @$args, $demo]);
        is $st, 1, "$label: exit 1";
        like $err, qr/^nytp \S+: \(standard output\): write failed: No space left on device\n\z/,
            "$label: one line naming the output";
    }
}

done_testing;
