#!/usr/bin/perl
# Devel::NYTP under modules that switch perl's stacks, move its contexts
# about, or run perl's own ops from ops of their own:
#
# - coro.pl: Coro's coroutines have perl stacks of their own; cede, join
#   and a channel switch between them from inside nested subs, evals, a
#   sort sub and a string eval (Devel::NYTProf 6 dies there with SIGSEGV,
#   and so did Devel::NYTP until a call that switched stacks was no
#   longer taken for one that entered a perl sub);
# - async.pl: Future::AsyncAwait's await, a custom op, leaves a suspended
#   async sub by PL_ppaddr[OP_RETURN]() (Devel::NYTProf 6 aborts there,
#   and Devel::NYTP died with "panic: unimplemented op custom" until each
#   wrapper knew the op type it was installed for);
# - try-catch.pl: Syntax::Keyword::Try;
# - scopes.pl: Scope::Upper's unwind and uplevel, Return::MultiLevel,
#   perl's defer, Object::Pad's methods.
#
# Under every option set each program must end normally, print what it
# prints unprofiled, and leave a complete profile that both readers load,
# with no negative sub time and the call counts the program counted
# itself (an async sub: its calls and its resumptions), or for scopes.pl
# Devel::NYTProf's (uplevel enters the sub it runs in a second time, for
# both profilers).
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;

my $nytp = nytp();
my $inc = repo() . '/build/perl';
my $oracle_data = repo() . '/tests/oracle-data.pl';
my $dir = scratch_dir();
delete $ENV{NYTPROF};

# The counts a program prints as lines of NAME=N words.
sub printed_counts {
    my ($out) = @_;
    my @lines = grep { /^\w+=\d+(?: \w+=\d+)*$/ } split /\n/, $out // '';
    return map { +{ map { split /=/ } split / / } } @lines;
}

# The call count of every sub of main and Counter in a profile (nytp
# dump --data), by name without the package.
sub profile_counts {
    my ($data) = @_;
    return { map { /^sub_subinfo\t(?:main|Counter)::(\w+)\t\[ \S+ calls (\d+) times/ ? ($1, $2) : () }
            split /\n/, $data // '' };
}

# The call counts of Devel::NYTProf's profile of a program.
sub oracle_counts {
    my ($prog) = @_;
    my $file = "$dir/oracle.out";
    local $ENV{NYTPROF} = "file=$file";
    my ($st, undef, $err) = run_cmd([$^X, '-d:NYTProf', $prog]);
    is $st, 0, "$prog under Devel::NYTProf" or diag $err;
    my (undef, $data) = run_cmd([$nytp, 'dump', '--data', $file]);
    return profile_counts($data);
}

my @cases = (
    ['coro.pl', 'Coro'],
    ['async.pl', 'Future::AsyncAwait'],
    ['try-catch.pl', 'Syntax::Keyword::Try'],
    ['scopes.pl', 'Scope::Upper, Return::MultiLevel, Object::Pad'],
);
for my $case (@cases) {
    my ($name, $modules) = @$case;
    my $prog = repo() . "/tests/programs/$name";
    my ($st, $want, $err) = run_cmd([$^X, $prog]);
    is $st, 0, "$name runs unprofiled ($modules: make deps)" or diag $err;
    my ($calls, $resumed) = printed_counts($want);
    ok $calls && %$calls, "$name: the program's own call counts";
    my %expect = %{ $calls // {} };
    $expect{$_} += $resumed->{$_} for keys %{ $resumed // {} };
    # sort calls a sub without an entersub: no call of it is recorded,
    # by Devel::NYTProf either
    delete $expect{by_len};
    if ($name eq 'scopes.pl') {
        my $theirs = oracle_counts($prog);
        %expect = map { $_ => $theirs->{$_} } grep { exists $theirs->{$_} } keys %expect;
        ok keys %expect >= 8, 'scopes.pl: Devel::NYTProf counted the subs';
    }

    for my $opts ('', 'stmts=0', 'leave=0', 'use_db_sub=1', 'calls=2', 'blocks=1', 'compress=0',
        'findcaller=1', 'subs=0', 'sample=1000') {
        my $label = "$name, " . ($opts || 'default options');
        my $file = "$dir/stacks.out";
        unlink $file, glob("$file.*");
        local $ENV{NYTPROF} = join ':', grep { length } $opts, "file=$file";
        my ($pst, $out, $perr) = run_cmd([$^X, "-I$inc", '-d:NYTP', $prog]);
        is $pst, 0, "$label: the profiled program ends normally (not by a signal)" or diag $perr;
        is $out, $want, "$label: it prints what it prints unprofiled";
        delete local $ENV{NYTPROF}; # Devel::NYTProf::Data's own module reads it
        my ($dst, $data, $derr) = run_cmd([$nytp, 'dump', '--data', '--strict', $file]);
        is $dst, 0, "$label: nytp dump --data --strict reads the whole profile" or diag $derr;
        my ($ost, undef, $oerr) = run_cmd([$^X, $oracle_data, $file]);
        is $ost, 0, "$label: Devel::NYTProf::Data loads it" or diag $oerr;
        my @negative = grep { /^sub_subinfo\t/ && /\s-\d/ } split /\n/, $data // '';
        is "@negative", '', "$label: no negative sub time";
        next if $opts eq 'subs=0' || $opts eq 'sample=1000'; # no counts to hold
        my $got = profile_counts($data);
        is_deeply { map { $_ => $got->{$_} } keys %expect }, \%expect,
            "$label: every sub's call count is the program's own";
    }
}

# try/catch: Devel::NYTProf profiles it too, with the same counts.
{
    my $file = "$dir/try.nytprof.out";
    local $ENV{NYTPROF} = "file=$file";
    my ($st, undef, $err) = run_cmd([$^X, '-d:NYTProf', repo() . '/tests/programs/try-catch.pl']);
    is $st, 0, 'try-catch.pl under Devel::NYTProf' or diag $err;
    my ($dst, $theirs) = run_cmd([$nytp, 'dump', '--data', $file]);
    local $ENV{NYTPROF} = "file=$dir/try.nytp.out";
    run_cmd([$^X, "-I$inc", '-d:NYTP', repo() . '/tests/programs/try-catch.pl']);
    my (undef, $ours) = run_cmd([$nytp, 'dump', '--data', "$dir/try.nytp.out"]);
    is_deeply profile_counts($ours), profile_counts($theirs),
        'try-catch.pl: the call counts of Devel::NYTProf';
}

done_testing;
