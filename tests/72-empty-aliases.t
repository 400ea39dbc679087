#!/usr/bin/perl
# html and csv: files with nothing in them get no page (200,000 of them
# stay cheap), and one source file named several ways ("/a/./b.pl",
# "/a//b.pl") is read once and gets one page with the data of all names.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;
use Time::HiRes qw(time);

my $nytp = nytp();
my $gen = repo() . '/build/gen-profile';
my $dir = scratch_dir();

sub tree_size {
    my $d = shift;
    opendir my $dh, $d or die "$d: $!";
    my @f = grep { !/\A\.\.?\z/ } readdir $dh;
    my $bytes = 0;
    $bytes += -s "$d/$_" for @f;
    return (scalar @f, $bytes);
}

# ---- 200,000 files declared with nothing in them --------------------------
my $empty = "$dir/empty.out";
system($gen, 'empty-fids', 200000, $empty) == 0 or die 'gen-profile failed';
for my $cmd (qw(html csv)) {
    my $out = "$dir/empty-$cmd";
    my $t0 = time;
    my ($st, undef, $err) = run_cmd([$nytp, $cmd, '-o', $out, $empty], cwd => $dir);
    my $secs = time - $t0;
    is $st, 0, "$cmd of 200,000 empty files: exit 0" or diag $err;
    my ($n, $bytes) = tree_size($out);
    cmp_ok $n, '<=', 10, "$cmd: no file per empty file ($n files)";
    cmp_ok $bytes, '<', 1_000_000, "$cmd: the output stays small ($bytes bytes)";
    cmp_ok $secs, '<', 20, "$cmd: and quick (${secs}s)";
}
my $index = slurp_file("$dir/empty-html/index.html");
like $index, qr/200,000 more files with no data/, 'the index counts the files with no data';
my @links = $index =~ /href="?([^" >]+\.html)/g;
my @missing = grep { !-e "$dir/empty-html/$_" } @links;
is "@missing", '', 'every page the index links to is there';

# ---- one real file named three ways ----------------------------------------
mkdir "$dir/src";
my $src = "$dir/src/alias.pl";
open my $fh, '>', $src or die;
print $fh "my \$x = 1;\nsub f { 2 }\nf();\n";
close $fh;
my $al = "$dir/aliases.out";
system($gen, 'aliases', 100, $al, $src) == 0 or die 'gen-profile failed';

my ($st, undef, $err) = run_cmd([$nytp, 'html', '-o', "$dir/al-html", $al]);
is $st, 0, 'html of a file named three ways: exit 0' or diag $err;
opendir my $dh, "$dir/al-html" or die;
my @pages = grep { /alias-pl/ } readdir $dh;
is scalar(@pages), 1, 'one page for the file (not one per name)' or diag "@pages";
my $page = @pages ? slurp_file("$dir/al-html/$pages[0]") : '';
like $page, qr/id=L1><td>1<td>2</, 'line 1 has the statements of both names that ran it';
like $page, qr/id=L2><td>2<td>1</, 'line 2 has those of the third name';
like $page, qr/main::f/, 'the sub defined under another name is on the page';

($st, undef, $err) = run_cmd([$nytp, 'csv', '-o', "$dir/al-csv", $al]);
is $st, 0, 'csv of a file named three ways: exit 0' or diag $err;
opendir $dh, "$dir/al-csv" or die;
my @csv = grep { /alias/ } readdir $dh;
is scalar(@csv), 1, 'one csv file for the file' or diag "@csv";
my $csv = @csv ? slurp_file("$dir/al-csv/$csv[0]") : '';
like $csv, qr/^[\d.]+,2,[\d.]+,my \$x = 1;$/m, 'csv line 1 adds up both names';

SKIP: {
    my ($ok) = run_cmd(['strace', '-o', "$dir/strace.txt", 'true']);
    skip 'no working strace', 1 if $ok != 0;
    run_cmd(['strace', '-f', '-e', 'trace=open,openat', '-o', "$dir/strace.txt", $nytp, 'html', '-o', "$dir/al-html2",
             $al]);
    my @opens = grep { /\Q$src\E"|alias\.pl"/ && !/al-html2/ } split /\n/, slurp_file("$dir/strace.txt");
    is scalar(@opens), 1, 'html reads the source once' or diag join "\n", @opens;
}

done_testing;
