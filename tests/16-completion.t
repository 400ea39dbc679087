#!/usr/bin/perl
# The bash completion, run in bash: profile operands include the profiles
# of child processes (FILE.PID), and --nytprof= completes the profiler's
# option names and their values.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;

my $bash = (grep { -x } map { "$_/bash" } split /:/, $ENV{PATH})[0];
plan skip_all => 'bash is not installed' unless $bash;

my $dir = scratch_dir() . '/comp';
mkdir $dir or die "$dir: $!";
for my $f (qw(nytprof.out nytprof.out.12345 x.out x.out.777 x.out.777.1700000000 x.out.s1 x.out.777.s2 notes.txt x.outer)) {
    open my $fh, '>', "$dir/$f" or die;
    close $fh;
}
my $script = "$dir/complete.sh";
open my $fh, '>', $script or die;
print $fh <<'SH';
source "$1"
COMP_WORDBREAKS=$' \t\n"\'><=;|&(:'
COMP_LINE=$2
COMP_POINT=${#2}
COMPREPLY=()
_nytp
printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort | tr '\n' ' '
SH
close $fh;

# The candidates bash would offer for the command line $line (the cursor
# at its end), sorted, separated by blanks.
sub complete {
    my $line = shift;
    my ($st, $out, $err) = run_cmd([$bash, '--norc', '--noprofile', $script, repo() . '/completion/nytp.bash', $line],
                                   cwd => $dir);
    diag $err if $err;
    $out =~ s/ \z//;
    return $out;
}

is complete('nytp html '), 'nytprof.out nytprof.out.12345 x.out x.out.777 x.out.777.1700000000 x.out.777.s2 x.out.s1',
    'profiles: *.out, nytprof.out* and child profiles FILE.PID (not notes.txt, x.outer)';
is complete('nytp calls x'), 'x.out x.out.777 x.out.777.1700000000 x.out.777.s2 x.out.s1',
    'child profiles of x.out: x.out.PID, and segments: x.out.sN';
is complete('nytp dump -f x.out.'), 'x.out.777 x.out.777.1700000000 x.out.777.s2 x.out.s1',
    '-f: child profiles and segments too';

my $all = complete('nytp run --nytprof=');
like $all, qr/(?:^| )calls= /, '--nytprof=: the option names, each with its =';
like $all, qr/(?:^| )sigexit= /, '... sigexit';
like $all, qr/(?:^| )start= /, '... start';
is complete('nytp run --nytprof=com'), 'compress=', '--nytprof=com: compress=';
is complete('nytp run --nytprof=calls='), '0 1 2', '--nytprof=calls=: its values';
is complete('nytp run --nytprof=calls=2:st'), 'start= stmts=', 'after a ":" the next option';
is complete('nytp run --nytprof=calls=2:start=e'), 'end', '... and its value';
is complete('nytp run --nytprof '), $all, '--nytprof VALUE as the next word: the same';
is complete('nytp run --nytprof=nosuch='), '', 'an unknown option: no values';

done_testing;
