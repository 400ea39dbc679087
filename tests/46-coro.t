#!/usr/bin/perl
# Devel::NYTP under Coro (Debian libcoro-perl): coroutines have perl
# stacks of their own, and cede, join and a channel switch between them
# from inside nested subs, evals, a sort sub and a string eval
# (tests/programs/coro.pl).  Devel::NYTProf 6 dies with SIGSEGV on this
# program; Devel::NYTP must run it to the end under every option set,
# print what it prints unprofiled, and write a complete profile that
# both readers load, with the call counts the program counted itself.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;

my $nytp = nytp();
my $inc = repo() . '/build/perl';
my $prog = repo() . '/tests/programs/coro.pl';
my $oracle_data = repo() . '/tests/oracle-data.pl';
my $dir = scratch_dir();
delete $ENV{NYTPROF};

my ($st, $want, $err) = run_cmd([$^X, $prog]);
is $st, 0, 'coro.pl runs unprofiled (Coro is installed: make deps)' or diag $err;
my ($counts_line) = ($want // '') =~ /^(\w+=\d+(?: \w+=\d+)*)$/m;
my %want = map { split /=/ } split / /, $counts_line // '';
ok $want{leaf} && $want{top}, "the program's own call counts: " . ($counts_line // 'none');
# sort calls by_len without an entersub: no call of it is recorded, by
# Devel::NYTProf either
delete $want{by_len};

for my $opts ('', 'stmts=0', 'leave=0', 'use_db_sub=1', 'calls=2', 'blocks=1', 'compress=0',
    'findcaller=1', 'subs=0', 'sample=1000') {
    my $label = $opts || 'default options';
    my $file = "$dir/coro.out";
    unlink $file, glob("$file.*");
    local $ENV{NYTPROF} = join ':', grep { length } $opts, "file=$file";
    my ($pst, $out, $perr) = run_cmd([$^X, "-I$inc", '-d:NYTP', $prog]);
    is $pst, 0, "$label: the profiled program ends normally (not by a signal)" or diag $perr;
    is $out, $want, "$label: it prints what it prints unprofiled";

    my ($dst, $data, $derr) = run_cmd([$nytp, 'dump', '--data', '--strict', $file]);
    is $dst, 0, "$label: nytp dump --data --strict reads the whole profile" or diag $derr;
    my ($ost, undef, $oerr) = run_cmd([$^X, $oracle_data, $file]);
    is $ost, 0, "$label: Devel::NYTProf::Data loads it" or diag $oerr;
    my @negative = grep { /^sub_subinfo\t/ && /\s-\d/ } split /\n/, $data // '';
    is "@negative", '', "$label: no negative sub time";
    next if $opts eq 'subs=0' || $opts eq 'sample=1000'; # no counts to hold

    my %got = map { /^sub_subinfo\tmain::(\w+)\t\[ \S+ calls (\d+) times/ ? ($1, $2) : () }
        split /\n/, $data // '';
    is_deeply { map { $_ => $got{$_} } keys %want }, \%want,
        "$label: every sub's call count is the program's own";
}

done_testing;
