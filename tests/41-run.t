#!/usr/bin/perl
# 'nytp run': finds the profiler of the build, passes the program its
# arguments and its exit status back, names the profile on stderr, and
# applies -o and --nytprof; the profile matches Devel::NYTProf's.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;
use NytpMask;

my $nytp = nytp();
my $progs = repo() . '/tests/programs';
my $dir = scratch_dir();
delete $ENV{NYTPROF};
delete @ENV{qw(PERL5LIB PERLLIB)}; # the profiler must be found without them

sub write_script {
    my ($name, $code) = @_;
    open my $fh, '>', "$dir/$name" or die;
    print $fh $code;
    close $fh;
    return "$dir/$name";
}

my ($st, $out, $err) = run_cmd([$nytp, 'run', '--help']);
is $st, 0, '--help exits 0';
like $out, qr/^usage: nytp run/, '--help prints the usage';
($st, $out, $err) = run_cmd([$nytp, '--help']);
like $out, qr/^\s+run\s/m, 'nytp --help lists run';

($st, $out, $err) = run_cmd([$nytp, 'run']);
is $st, 2, 'no script: exit 2';
like $err, qr/^nytp run: no program to profile/, 'no script: one line';
($st, $out, $err) = run_cmd([$nytp, 'run', '--frob', 'x.pl']);
is $st, 2, 'unknown option: exit 2';

# Arguments reach the program untouched (its options too), the profile
# goes to the default place, and stderr names it.
my $args = write_script('args.pl', 'print join("|", @ARGV), "\n"; exit 7;' . "\n");
unlink "$dir/nytprof.out";
($st, $out, $err) = run_cmd([$nytp, 'run', $args, '-o', 'x', '--', 'a b'], cwd => $dir);
is $st, 7, 'the exit status of the program is passed through';
is $out, "-o|x|--|a b\n", 'the program gets its arguments, options included';
like $err, qr/^nytp run: profile written to nytprof\.out$/m, 'stderr names the profile';
ok -s "$dir/nytprof.out", 'default profile: ./nytprof.out';

# A stale profile is not mistaken for a new one.
($st, $out, $err) = run_cmd([$nytp, 'run', '--nytprof=no_such_option=1', $args], cwd => $dir);
isnt $st, 0, 'unknown profiler option: non-zero exit';
like $err, qr/unknown option 'no_such_option'/, 'unknown profiler option: the profiler says so';
like $err, qr/^nytp run: no profile was written \(expected nytprof\.out\)$/m,
    'the old nytprof.out is not reported as written';

# -o (with characters the option syntax escapes) and --nytprof.
my $odd = "$dir/odd:name\\x.out";
($st, $out, $err) = run_cmd([$nytp, 'run', '-o', $odd, '--nytprof', 'calls=0:compress=0',
    "$progs/closures.pl"]);
is $st, 0, '-o and --nytprof: exit 0';
like $err, qr/^nytp run: profile written to \Q$odd\E$/m, '-o: stderr names the file';
($st, $out) = run_cmd([$nytp, 'dump', $odd]);
is $st, 0, '-o: the file is a profile';
unlike $out, qr/^START_DEFLATE/m, '--nytprof compress=0: not compressed';
unlike $out, qr/^SUB_RETURN/m, '--nytprof calls=0: no call events';
like $out, qr/^OPTION\tcalls\t0$/m, '--nytprof: the option is recorded';

# The profile is the one Devel::NYTProf writes, times aside.
{
    local $ENV{PERL_HASH_SEED} = 0;
    local $ENV{PERL_PERTURB_KEYS} = 0;
    ($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/ours.out", "$progs/evals-loop.pl"],
        cwd => $dir);
    is $st, 0, 'evals-loop: exit 0';
    local $ENV{NYTPROF} = "file=$dir/theirs.out";
    run_cmd([$^X, '-d:NYTProf', "$progs/evals-loop.pl"], cwd => $dir);
    my (undef, $a) = run_cmd([$nytp, 'dump', '--data', "$dir/ours.out"]);
    my (undef, $b) = run_cmd([$nytp, 'dump', '--data', "$dir/theirs.out"]);
    is mask_profile_dump($a), mask_profile_dump($b), 'evals-loop: same profile as Devel::NYTProf';
}

# Exit paths: die, exec, POSIX::_exit, a signal; each profile complete.
my $dst;
for my $case (['dies', 255], ['execs', 4], ['posix-exit', 3]) {
    my ($prog, $want) = @$case;
    ($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/$prog.out", "$progs/$prog.pl"]);
    is $st, $want, "$prog: exit status $want passed through";
    my ($dst) = run_cmd([$nytp, 'dump', '--strict', "$dir/$prog.out"]);
    is $dst, 0, "$prog: the profile is complete";
}
($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/sig.out", "$progs/signals.pl"]);
is $st, 128 + 15, 'killed by SIGTERM: exit status 143';
like $err, qr/^nytp run: the program was killed by signal 15 \(SIGTERM\)$/m,
    'killed by SIGTERM: stderr says so';
like $err, qr/^nytp run: profile written to \Q$dir\E\/sig\.out is incomplete .*sigexit=1/m,
    'killed by SIGTERM: the profile is named incomplete, and sigexit=1 suggested';
($dst) = run_cmd([$nytp, 'dump', '--strict', "$dir/sig.out"]);
isnt $dst, 0, 'killed by SIGTERM: the profile is indeed truncated';
($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/sig.out", '--nytprof=sigexit=TERM',
    "$progs/signals.pl"]);
is $st, 1, 'sigexit=TERM: the profiler exits 1';
($dst) = run_cmd([$nytp, 'dump', '--strict', "$dir/sig.out"]);
is $dst, 0, 'sigexit=TERM: the profile is complete';
unlink "$dir/sig.out";
($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/sig.out", '--nytprof=sigexit=1',
    "$progs/signals.pl"]);
is $st, 1, 'sigexit=1 covers TERM: the profiler exits 1';
($dst) = run_cmd([$nytp, 'dump', '--strict', "$dir/sig.out"]);
is $dst, 0, 'sigexit=1 covers TERM: the profile is complete';

# A program that loads Devel::NYTProf's own XS (nytprofcalls does): its
# boot code replaces DB::finish_profile, DB::_END and friends, and the
# profile must still be finished by Devel::NYTP's own code, complete.
SKIP: {
    skip 'nytprofcalls is not installed', 4 if missing(-x '/usr/bin/nytprofcalls', 'nytprofcalls (libdevel-nytprof-perl)');
    my $small = "$dir/small.out";
    ($st) = run_cmd([$nytp, 'run', '-o', $small, $args]);
    is $st, 7, 'nytprofcalls input: made';
    ($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/calls-run.out", '--',
        '/usr/bin/nytprofcalls', $small]);
    is $st, 0, 'nytp run -- /usr/bin/nytprofcalls FILE: exit 0 (no crash at exit)';
    my ($dst, undef, $derr) = run_cmd([$nytp, 'dump', '--strict', "$dir/calls-run.out"]);
    is $dst, 0, 'nytprofcalls run: the profile is complete' or diag $derr;
    # and with sigexit, whose handler must call our finish_profile too
    my $killer = write_script('nytprof-kill.pl',
        "require Devel::NYTProf::Data;\nkill 'TERM', \$\$;\nsleep 5;\n");
    ($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/calls-sig.out",
        '--nytprof=sigexit=TERM', $killer]);
    ($dst, undef, $derr) = run_cmd([$nytp, 'dump', '--strict', "$dir/calls-sig.out"]);
    ok $st == 1 && $dst == 0, 'Devel::NYTProf loaded, sigexit=TERM: exit 1, complete profile'
        or diag "exit $st: $err $derr";
}

# Perl's switches before the program go to perl: -I, -M (as one word or
# two), -w, -e CODE with the program's arguments after it.
{
    mkdir "$dir/lib";
    open my $fh, '>', "$dir/lib/RunFoo.pm" or die;
    print $fh "package RunFoo;\nsub hi { print join('|', 'hi', \@_), \"\\n\" }\n1;\n";
    close $fh;
    ($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/sw.out", '-I', 'lib', '-M', 'RunFoo',
        '-w', '-e', 'RunFoo::hi(@ARGV); my $x; print "w\n" if $^W', 'a', '-b'], cwd => $dir);
    is $st, 0, 'perl switches: exit 0' or diag $err;
    is $out, "hi|a|-b\nw\n", 'perl switches: -I, -M, -w and -e reach perl, the arguments the program';
    my (undef, $dump) = run_cmd([$nytp, 'dump', '--tags=NEW_FID', "$dir/sw.out"]);
    like $dump, qr{lib/RunFoo\.pm}, 'perl switches: the module is in the profile';
    ($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/sw2.out", '-Ilib', '-MRunFoo', '--',
        write_script('sw.pl', "RunFoo::hi(\@ARGV);\n"), '-x'], cwd => $dir);
    is $out, "hi|-x\n", 'perl switches in one word, then -- SCRIPT';
    ($st, $out, $err) = run_cmd([$nytp, 'run', '-e']);
    is $st, 2, '-e without CODE: usage error';
}

# Every profile the run wrote is named: the children's FILE.PID too.
{
    my $forks = write_script('forks.pl',
        "my \@k; for (1 .. 2) { my \$p = fork; if (!\$p) { print \"\$\$\\n\"; exit 0 } push \@k, \$p }\n"
        . "waitpid \$_, 0 for \@k;\n");
    unlink glob("$dir/fk.out*");
    ($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/fk.out", $forks]);
    is $st, 0, 'forks: exit 0';
    my @kids = split /\n/, $out;
    is scalar(@kids), 2, 'forks: two children';
    like $err, qr/^nytp run: profile written to \Q$dir\E\/fk\.out$/m, 'forks: the parent\'s profile named';
    for my $k (@kids) {
        like $err, qr/^nytp run: profile written to \Q$dir\E\/fk\.out\.$k$/m, "forks: child ${k}'s profile named";
    }
    is scalar(() = $err =~ /profile written/g), 3, 'forks: three profiles, no more';
}

# A perl that cannot be started: exit status 1, one line naming it.
($st, $out, $err) = run_cmd([$nytp, 'run', '--perl', "$dir/no-such-perl", $args]);
is $st, 1, 'missing perl: exit status 1';
like $err, qr/^nytp run: cannot run \Q$dir\E\/no-such-perl: No such file or directory$/m,
    'missing perl: one line naming it';
unlike $err, qr/profile/, 'missing perl: no word about a profile';

# An unwritable profile: an error naming it, before the program runs.
unlink "$dir/ran";
my $touch = write_script('touch.pl', "open my \$f, '>', '$dir/ran' or die;\n");
($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/no/such/dir/x.out", $touch]);
isnt $st, 0, 'unwritable -o: non-zero exit';
like $err, qr{\Q$dir\E/no/such/dir/x\.out}, 'unwritable -o: the error names the path';
ok !-e "$dir/ran", 'unwritable -o: the program did not run';

# Installed layout: bin/nytp finds the profiler in perl's site arch
# directory under the same prefix (where 'make install' puts it).
{
    use Config;
    use File::Path qw(make_path);
    use File::Copy qw(copy);
    (my $rel = $Config{installsitearch}) =~ s{^\Q$Config{siteprefix}\E/?}{};
    my $prefix = "$dir/prefix";
    make_path("$prefix/bin", "$prefix/$rel/Devel", "$prefix/$rel/auto/Devel/NYTP");
    copy($nytp, "$prefix/bin/nytp") or die;
    chmod 0755, "$prefix/bin/nytp";
    copy(repo() . '/build/perl/Devel/NYTP.pm', "$prefix/$rel/Devel/NYTP.pm") or die;
    copy(repo() . '/build/perl/auto/Devel/NYTP/NYTP.so', "$prefix/$rel/auto/Devel/NYTP/NYTP.so") or die;
    ($st, $out, $err) = run_cmd(["$prefix/bin/nytp", 'run', '-o', "$dir/inst.out", $args, 'x']);
    is $st, 7, 'installed layout: the profiler is found next to the installed nytp';
    like $err, qr/profile written to \Q$dir\E\/inst\.out/, 'installed layout: profile written';

    unlink "$prefix/$rel/Devel/NYTP.pm";
    SKIP: {
        skip 'Devel::NYTP is installed in perl\'s @INC', 2 if grep { -f "$_/Devel/NYTP.pm" } @INC;
        ($st, $out, $err) = run_cmd(["$prefix/bin/nytp", 'run', '-o', "$dir/none.out", $args]);
        isnt $st, 0, 'no profiler anywhere: non-zero exit';
        like $err, qr{Devel/NYTP\.pm}, 'no profiler anywhere: perl says what it could not find';
    }
}

done_testing;
