#!/usr/bin/perl
# Devel::NYTP against Devel::NYTProf: each test program is profiled by both
# (same directory, same hash seed), and 'nytp dump --data' of the two
# profiles must agree once times are masked (tests/lib/NytpMask.pm): the
# files, the statement count of every line, the subs and their line
# ranges, the call count of every sub and of every call site, recursion
# depths, the options.  Also: the whole chunk stream with times masked,
# Devel::NYTProf::Data loading our files silently, forked children,
# run-time control, signals, exit paths, and bad options and paths.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;
use NytpMask;

my $nytp = nytp();
my $inc = repo() . '/build/perl';
my $progs = repo() . '/tests/programs';
my $oracle_data = repo() . '/tests/oracle-data.pl';
my $dir = scratch_dir();

ok -f "$inc/Devel/NYTP.pm" && -f "$inc/auto/Devel/NYTP/NYTP.so", 'make built the profiler into build/perl'
    or BAIL_OUT('no profiler in build/perl');

# Same hash order in both processes, so that files first seen while the
# sub line ranges are written get the same ids.
$ENV{PERL_HASH_SEED} = 0;
$ENV{PERL_PERTURB_KEYS} = 0;

# profile($which, $name, $script, $opts, %env) -> ($status, $file, $stderr)
sub profile {
    my ($which, $name, $script, $opts, %env) = @_;
    my $file = "$dir/$name.$which.out";
    unlink $file, glob("$file.*");
    local $ENV{NYTPROF} = join ':', grep { length } ($opts // ''), "file=$file";
    local @ENV{ keys %env } = values %env;
    my @perl = $which eq 'ours' ? ($^X, "-I$inc", '-d:NYTP') : ($^X, '-d:NYTProf');
    my ($st, $out, $err) = run_cmd([@perl, $script], cwd => $dir);
    return ($st, $file, $err);
}

sub masked_data {
    my ($file) = @_;
    my ($st, $out, $err) = run_cmd([$nytp, 'dump', '--data', $file]);
    return "nytp dump --data failed ($st): $err" if $st;
    return mask_profile_dump($out);
}

sub same_text {
    my ($got, $want, $label) = @_;
    return pass($label) if $got eq $want;
    my @a = split /^/, $got;
    my @b = split /^/, $want;
    my $i = 0;
    $i++ while $i < @a && $i < @b && $a[$i] eq $b[$i];
    fail $label;
    diag "first difference at line " . ($i + 1) . ":\n ours:   " . ($a[$i] // "(end)\n")
        . " oracle: " . ($b[$i] // "(end)\n");
    return 0;
}

# Profile $prog both ways with $opts and compare; returns both files (and
# keeps them in %made under "prog|opts").
my %made;
# Where Devel::NYTP differs on purpose: with sigexit the program still
# dies of the signal once the profile is finished (Devel::NYTProf exits 1).
my %status_differs = ('signals|sigexit=TERM' => 128 + 15);
# Programs whose pseudo-subs' file depends on the checkout's path.
my %pseudo_placed = ('line-directives' => 1);
sub compare_program {
    my ($prog, $opts, %env) = @_;
    (my $name = "$prog-" . ($opts || 'default')) =~ s/[=:,]/-/g;
    my $script = "$progs/$prog.pl";
    my ($ost, $ofile, $oerr) = profile('oracle', $name, $script, $opts, %env);
    my ($st, $file, $err) = profile('ours', $name, $script, $opts, %env);
    my $label = "$prog" . ($opts ? " ($opts)" : '');
    if (defined(my $want = $status_differs{"$prog|" . ($opts // '')})) {
        is $st, $want, "$label: exit status $want (Devel::NYTProf: $ost; see sigexit in Devel::NYTP)";
    } else {
        is $st, $ost, "$label: same exit status as under Devel::NYTProf ($ost)";
    }
    unlike $err, qr/Devel::NYTP|panic|Segmentation/, "$label: no complaint from the profiler"
        or diag $err;
    my ($ours, $theirs) = (masked_data($file), masked_data($ofile));
    if ($pseudo_placed{$prog}) {
        # where main::RUNTIME and the builtins are filed follows the hash
        # order of %DB::sub, whose keys here hold the checkout's path (a
        # '#line' file named after $0): both profilers may pick either
        # file, depending on the directory the tests run in
        for ($ours, $theirs) {
            s/^fid_fileinfo\t\d+\tsub\tmain::(?:RUNTIME|CORE:\w+)\t.*\n//mg;
            s/^(sub_subinfo\tmain::(?:RUNTIME|CORE:\w+)\t\[ )\d+:/${1}F:/mg;
        }
    }
    same_text($ours, $theirs, "$label: same profile as Devel::NYTProf");
    $made{"$prog|" . ($opts // '')} = [$file, $ofile];
    return ($file, $ofile);
}

# ---- every program, default options ------------------------------------------

my @programs = qw(closures deep deep10k evals-loop modules xsubs-slowops control dies
    posix-exit execs fork misc threads line-directives libraries unwinding renames caches
    leaving dies-in-xsub exits try-catch inside-builtins same-line corners corners-files folding
    contexts);
my %files;
for my $prog (@programs) {
    my ($file, $ofile) = compare_program($prog);
    $files{$prog} = [$file, $ofile];
}

# The one forked child of a program compared above wrote FILE.PID, as
# Devel::NYTProf's did, and the two match.
sub same_child_profile {
    my ($prog, $what) = @_;
    my ($file, $ofile) = @{ $files{$prog} };
    my @ours = glob("$file.*");
    my @theirs = glob("$ofile.*");
    is scalar(@ours), 1, "$prog: $what wrote its own profile, FILE.PID";
    is scalar(@theirs), 1, "$prog: so did Devel::NYTProf's child";
    same_text(masked_data($ours[0]), masked_data($theirs[0]), "$prog: same child profile")
        if @ours == 1 && @theirs == 1;
}

same_child_profile('fork', 'the child');
# The child of corners-files.pl leaves by exit from inside a sort block.
same_child_profile('corners-files', 'the child that exits in a sort block');
# The profiler's caches of subs and call sites keyed by address: subs
# redefined, assigned to globs, localised, made by string evals, deleted
# and made again, goto, AUTOLOAD, recursion, another name; the forked
# child's profile (after its copy of the parent's arcs is dropped) too.
same_child_profile('renames', 'the child');

# Packages deleted under live subs (Devel::NYTProf crashes there, so the
# counts are those stashes.pl makes, see its comment): each sub is known
# by the name its glob has at the call, never by a name a cache kept.
{
    my ($st, $file, $err) = profile('ours', 'stashes', "$progs/stashes.pl");
    is $st, 0, 'stashes: runs' or diag $err;
    my (undef, $out) = run_cmd([$nytp, 'dump', '--data', $file]);
    my %calls = $out =~ /^sub_subinfo\t(\S+)\t\[ \S+ calls (\d+) times/mg;
    my %want = ('__ANON__::__ANON__' => 3, '(null)::f' => 4, 'Again::f' => 1,
        map { ("Gone$_\::g" => 2, "Gone$_\::f" => 2) } 1 .. 3);
    is_deeply { map { $_ => $calls{$_} } keys %want }, \%want,
        'stashes: calls counted under the names their globs had';
}

# Devel::NYTProf's own reader loads what we write, without a warning.
for my $prog (qw(closures evals-loop modules xsubs-slowops dies)) {
    my ($st, $out, $err) = run_cmd([$^X, $oracle_data, $files{$prog}[0]]);
    is $st, 0, "$prog: Devel::NYTProf::Data loads our profile";
    is $err, '', "$prog: ... without a warning";
}

# Devel::NYTProf's own tests compare a profile read by Devel::NYTProf::Data
# after normalize_variables(1) (times zeroed, options cleared) with a dump
# of what Devel::NYTProf wrote: a profile of ours must have no attribute or
# option left there that Devel::NYTProf's lacks (the @INC we add is an option).
{
    my $script = scratch_script('normalized.pl', "use strict;\nsub f { return \$_[0] * 2 }\nf(\$_) for 1 .. 3;\n");
    my %keys;
    for my $which (qw(ours oracle)) {
        my ($st, $file, $err) = profile($which, 'normalized', $script);
        is $st, 0, "normalize_variables: $which profiled" or diag $err;
        my $k = `$^X -MDevel::NYTProf::Data -e '
            my \$p = Devel::NYTProf::Data->new({filename => shift, quiet => 1});
            \$p->normalize_variables(1);
            print "attribute \$_\\n" for keys %{ \$p->attributes };
            print "option \$_\\n" for keys %{ \$p->options };' $file 2>&1`;
        $keys{$which} = { map { $_ => 1 } split /\n/, $k };
    }
    my @extra = sort grep { !$keys{oracle}{$_} } keys %{ $keys{ours} };
    ok keys %{ $keys{oracle} } > 5, 'normalize_variables: the oracle\'s profile has its attributes';
    is "@extra", '', 'normalize_variables(1): our profile has no key that Devel::NYTProf\'s lacks';
}

# An @INC of over 8 KB: the option inc stays within the 8,191 bytes
# of a line that Devel::NYTProf's reader can read from a compressed file
# (it lost a longer one whole), the directories that do not fit left out.
{
    my @dirs = map { "$dir/" . ('d' x 90) . sprintf('%03d', $_) } 1 .. 120;
    my $script = scratch_script('long-inc.pl', "BEGIN { unshift \@INC, qw(@dirs) }\nprint qq{ok\\n};\n");
    my ($st, $file, $err) = profile('ours', 'long-inc', $script);
    is $st, 0, 'an @INC of over 8 KB: profiled' or diag $err;
    my $got = `$^X -MDevel::NYTProf::Data -e 'print Devel::NYTProf::Data->new({filename => shift, quiet => 1})->options->{inc} // q{}' $file 2>&1`;
    ok length($got) > 4000 && length($got) <= 8186 && index($got, $dirs[0]) == 0,
        'Devel::NYTProf::Data reads its inc option, the first directories in it (' . length($got) . ' bytes)';
}

# Subs after a #line of 2**31 or more: perl's %DB::sub has their first
# line wrapped negative (it keeps it in an I32); Devel::NYTProf warns
# and makes it 0, we give the line back.  savesrc=0: saving the source
# makes perl itself allocate an array as long as the line number.
{
    my $script = scratch_script('high-lines.pl', join "\n", 'my $x = 0;', '#line 2147483647',
        'sub g { $x++ }', '#line 2147483648', 'sub h { $x++ }', '#line 4000000000', 'sub f { $x++ }',
        'f(); g(); h();', '');
    my ($st, $file, $err) = profile('ours', 'high-lines', $script, 'savesrc=0');
    is $st, 0, 'subs after #line 2**31 and more: profiled' or diag $err;
    unlike $err, qr/Negative/, '... without a complaint about their line numbers';
    my (undef, $out) = run_cmd([$nytp, 'dump', '--data', $file]);
    my %range = $out =~ /^sub_subinfo\tmain::(\w)\t\[ \d+:(\d+-\d+) /mg;
    is_deeply { map { $_ => $range{$_} } qw(g h f) },
        { g => '2147483647-2147483647', h => '2147483648-2147483648', f => '4000000000-4000000000' },
        '... and their first lines as written';
}

# ---- options -------------------------------------------------------------------------

my @variants = ('blocks=1', 'calls=2', 'calls=0', 'compress=0', 'slowops=0', 'slowops=1', 'stmts=0',
    'subs=0', 'savesrc=0', 'leave=0', 'start=init', 'start=end', 'nameevals=0', 'nameanonsubs=0',
    'clock=0', 'compress=1:forkdepth=1', 'findcaller=1', 'optimize=0', 'endatexit=1:libcexit=1',
    'use_db_sub=1');
for my $prog (qw(closures evals-loop modules)) {
    compare_program($prog, $_) for @variants;
}
# the caches' program without statements (nothing but the calls fills the
# file cache), with SUB_ENTRY events, and with the caller found from the
# context stack at every call
compare_program('caches', $_) for 'stmts=0', 'calls=2', 'findcaller=1';
# every way of leaving a sub, with the ends of calls seen without the
# statement wrappers (pp_sub_left)
for my $prog (qw(leaving dies-in-xsub exits)) {
    compare_program($prog, $_) for 'stmts=0', 'leave=0', 'use_db_sub=1';
}
# perl code run from inside builtins (and try/catch's custom ops), with
# the slow ops named without their package and unprofiled, and with the
# ends of calls seen without the statement wrappers
for my $prog (qw(inside-builtins try-catch)) {
    compare_program($prog, $_) for 'slowops=1', 'slowops=0', 'stmts=0', 'leave=0', 'use_db_sub=1';
}
# statements that follow another on their line share one clock reading:
# with the statement events seen by DB::DB, with the caller found from
# the context stack, without the wrappers of leave, and with blocks (whose
# events take the slow path)
compare_program('same-line', $_) for 'use_db_sub=1', 'findcaller=1', 'leave=0', 'blocks=1', 'calls=2';
# __SUB__, redo, signatures, sort by code ref and inside sort, handlers
# of warn and die, a CORE::GLOBAL override, a tied FETCH in a sort block,
# symbolic calls, do and require of files written at run time, #line in
# a string eval, a signal handler between sorts, die in DESTROY at global
# destruction: with DB::DB, blocks, without statements, with SUB_ENTRY
for my $prog (qw(corners corners-files)) {
    compare_program($prog, $_) for 'use_db_sub=1', 'blocks=1', 'stmts=0', 'calls=2';
}
compare_program('control', 'start=no');
compare_program('fork', 'forkdepth=0');
compare_program('signals', 'sigexit=TERM');
compare_program('posix-exit', 'subs=0:posix_exit=1');

# The whole chunk stream, in order, with times masked: the same events in
# the same order (SUB_INFO of the profiler's own module aside).
for my $case (['closures', ''], ['evals-loop', ''], ['modules', ''], ['misc', ''],
    ['closures', 'calls=2'], ['modules', 'calls=2'], ['evals-loop', 'blocks=1'], ['renames', ''],
    ['caches', ''], ['caches', 'stmts=0'], ['caches', 'calls=2'], ['caches', 'findcaller=1']) {
    my ($prog, $opts) = @$case;
    my @seq;
    for my $f (@{ $made{"$prog|$opts"} }) {
        my ($st, $out) = run_cmd([$nytp, 'dump', $f]);
        my @lines;
        for (split /\n/, $out) {
            my @c = split /\t/, $_, -1;
            next if $c[0] =~ /^(?:ATTRIBUTE|COMMENT)$/;
            next if $c[0] eq 'OPTION' && $c[1] eq 'inc'; # ours only
            next if $c[0] eq 'SUB_INFO' && $c[-1] =~ /^Devel::NYTP/;
            @c[1] = 'T' if $c[0] =~ /^TIME_(?:LINE|BLOCK)$/;
            @c[2, 3] = ('T', 'T') if $c[0] eq 'SUB_RETURN';
            @c[4, 5, 6] = ('T', 'T', 'T') if $c[0] eq 'SUB_CALLERS';
            @c[1 .. $#c] = ('P') x $#c if $c[0] =~ /^PID_/;
            push @lines, join "\t", @c;
        }
        push @seq, join "\n", @lines, '';
    }
    same_text($seq[0], $seq[1], "$prog" . ($opts ? " ($opts)" : '') . ': the same chunks in the same order');
}

# blocks=1: every TIME_BLOCK names the same block and sub lines.
for my $prog (qw(modules misc xsubs-slowops)) {
    my %blocks;
    for my $which (qw(oracle ours)) {
        my (undef, $file) = profile($which, "$prog-blocks", "$progs/$prog.pl", 'blocks=1');
        my (undef, $out) = run_cmd([$nytp, 'dump', '--tags=TIME_BLOCK', $file]);
        $out =~ s/^TIME_BLOCK\t-?\d+\t/TIME_BLOCK\tT\t/mg;
        $blocks{$which} = $out;
    }
    ok length $blocks{ours} > 100, "$prog (blocks=1): TIME_BLOCK chunks written";
    same_text($blocks{ours}, $blocks{oracle}, "$prog (blocks=1): the same block and sub lines");
}

# Devel::NYTProf 6.12 crashes with calls=2 in deep recursion (it keeps a
# pointer into the save stack across a call that may move it); ours must
# not, and its counts must match the oracle's default profile.
{
    my ($st, $file, $err) = profile('ours', 'deep10k-calls2', "$progs/deep10k.pl", 'calls=2');
    is $st, 0, 'deep10k (calls=2): runs' or diag $err;
    my $want = masked_data($files{deep10k}[1]);
    my $got = masked_data($file);
    s/^option\tcalls\t\d+\n//m for $want, $got;
    same_text($got, $want, 'deep10k (calls=2): same counts as Devel::NYTProf\'s default profile');
    my ($dst, $out) = run_cmd([$nytp, 'dump', '--tags=SUB_ENTRY,SUB_RETURN', $file]);
    my $entries = () = $out =~ /^SUB_ENTRY\t/mg;
    my $returns = () = $out =~ /^SUB_RETURN\t/mg;
    my ($deepest) = sort { $b <=> $a } $out =~ /^SUB_RETURN\t(\d+)\t/mg;
    is $entries, $returns, 'deep10k (calls=2): a SUB_ENTRY for every SUB_RETURN';
    is $deepest, 10_001, 'deep10k (calls=2): returns from depth 10,001';
}

# Run-time control: start=no, enable_profile, a second file, finish_profile.
{
    my %env = (NYTP_SECOND_FILE => "$dir/second.ours.out");
    my ($st, $file, $err) = profile('ours', 'newfile', "$progs/newfile.pl", 'start=no', %env);
    $env{NYTP_SECOND_FILE} = "$dir/second.oracle.out";
    my ($ost, $ofile) = profile('oracle', 'newfile', "$progs/newfile.pl", 'start=no', %env);
    is $st, $ost, 'enable_profile($file): same exit status';
    same_text(masked_data($file), masked_data($ofile), 'enable_profile: the first file matches');
    same_text(masked_data("$dir/second.ours.out"), masked_data("$dir/second.oracle.out"),
        'enable_profile($file): the second file matches');
}

# A profile per piece of work, each started and finished from inside subs
# (as Plack::Middleware::NYTP does per request): the calls still open when
# one is finished end after it, and nothing of theirs may appear in the
# next (Devel::NYTProf puts their arcs there, with times that span the
# closing of the file and exclusive times above the inclusive).
{
    my $script = "$dir/pieces.pl";
    open my $fh, '>', $script or die;
    print $fh <<"PERL";
sub hot { my \$s = 0; \$s += \$_ for 1 .. 1000; \$s }
sub fin { DB::finish_profile() }
sub piece { my \$n = shift; DB::enable_profile("$dir/piece.\$n.out"); hot(); fin(); }
sub outer { piece(shift) }
outer(\$_) for 1 .. 3;
PERL
    close $fh;
    my ($st) = profile('ours', 'pieces', $script, 'start=no');
    is $st, 0, 'a profile per piece of work: exit 0';
    for my $n (1 .. 3) {
        my (undef, $d) = run_cmd([$nytp, 'dump', '--tags=SUB_CALLERS', "$dir/piece.$n.out"]);
        my @arcs = map { (split /\t/)[8] } grep { /^SUB_CALLERS/ } split /\n/, $d;
        is "@arcs", 'main::hot', "piece $n: only the call it made (main::hot), none of an earlier piece";
    }
}

# Profiles finished from the main program, outside any sub: the call of
# DB::finish_profile ends after its file is closed and is counted in the
# next profile, with the caller's line, as Devel::NYTProf counts it (its
# t/test51-enable.t relies on it), whether the next is a new file or the
# same one begun again by enable_profile() without a name.
{
    my $script = "$dir/toplevel-finish.pl";
    open my $fh, '>', $script or die;
    print $fh <<"PERL";
sub work { 1 }
DB::enable_profile("\$ENV{OUT}.1"); work(); DB::finish_profile();
DB::enable_profile("\$ENV{OUT}.2"); work(); work(); DB::finish_profile();
work();
DB::enable_profile(); work(); DB::finish_profile();
DB::enable_profile("\$ENV{OUT}.3"); DB::disable_profile(); work(); DB::enable_profile(); work();
PERL
    close $fh;
    for my $opts ('start=no', 'start=no:use_db_sub=1') {
        my %arcs;
        for my $which (qw(oracle ours)) {
            my $out = "$dir/toplevel-finish.$which";
            unlink glob("$out.*");
            profile($which, 'toplevel-finish', $script, $opts, OUT => $out);
            for my $n (1 .. 3) {
                my (undef, $d) = run_cmd([$nytp, 'dump', '--tags=SUB_CALLERS', "$out.$n"]);
                # callee, caller, caller's line, count (arcs with calls)
                $arcs{$which}[$n] = join ' ', sort map { my @f = split /\t/; "$f[8]<$f[9]:$f[2]x$f[3]" }
                    grep { /^SUB_CALLERS/ && (split /\t/)[3] } split /\n/, $d;
            }
        }
        for my $n (1 .. 3) {
            is $arcs{ours}[$n], $arcs{oracle}[$n], "$opts, file $n: the same calls as Devel::NYTProf ($arcs{oracle}[$n])";
        }
    }
}

# perl -e and a program on standard input, with their source saved by
# default.  With savesrc=0 perl keeps no source lines at all, so neither
# profiler can save them (not even for -e, stdin or string evals); both
# agree on that too.
for my $case (['-e', ['-e', 'sub f { $_[0] * 2 } my $x = 0; $x += f($_) for 1 .. 10; eval q{ $x++ }']],
    ['stdin', ['-'], "$progs/closures.pl"]) {
    my ($label, $args, $stdin) = @$case;
    for my $opts ('', 'savesrc=0') {
        my %got;
        for my $which (qw(oracle ours)) {
            my $file = "$dir/$label.$which.out";
            local $ENV{NYTPROF} = join ':', grep { length } $opts, "file=$file";
            my @perl = $which eq 'ours' ? ($^X, "-I$inc", '-d:NYTP') : ($^X, '-d:NYTProf');
            run_cmd([@perl, @$args], cwd => $dir, stdin => defined $stdin ? slurp_file($stdin) : '');
            my (undef, $src) = run_cmd([$nytp, 'dump', '--tags=NEW_FID,SRC_LINE', $file]);
            $got{$which} = masked_data($file) . $src;
        }
        like $got{ours}, qr/^SRC_LINE\t1\t1\t/m, "$label: the source is saved" unless $opts;
        same_text($got{ours}, $got{oracle}, "$label ($opts): same profile and source as Devel::NYTProf");
    }
}

# AutoLoader subs split out of a module (AutoSplit): their statements are
# shown in the module, under its file id, and their source is saved there.
{
    my $pm = "$dir/AsFoo.pm";
    open my $fh, '>', $pm or die;
    print $fh "package AsFoo;\nuse AutoLoader 'AUTOLOAD';\nsub here { return 1 }\n1;\n__END__\n"
        . "sub split_a { return 2 + here() }\n"
        . "sub split_b { my \$s = 0; \$s += \$_ for 1 .. shift; return \$s }\n";
    close $fh;
    my ($st, $out, $err) = run_cmd([$^X, '-MAutoSplit', '-e', 'autosplit("AsFoo.pm", "auto", 0, 1, 1)'],
        cwd => $dir);
    is $st, 0, 'autosplit: AutoSplit split the test module' or diag $err;
    my $script = "$dir/as.pl";
    open $fh, '>', $script or die;
    print $fh "use lib '.';\nuse AsFoo;\nmy \$n = AsFoo::split_a() + AsFoo::split_b(10) + AsFoo::split_b(5);\n";
    close $fh;
    my %got;
    for my $which (qw(oracle ours)) {
        my ($pst, $file, $perr) = profile($which, 'autosplit', $script, '');
        my (undef, $src) = run_cmd([$nytp, 'dump', '--tags=NEW_FID,SRC_LINE', $file]);
        $got{$which} = masked_data($file) . $src;
    }
    like $got{ours}, qr/^fid_line_time\t\d+\t6\t\[ T 1 \]$/m, 'autosplit: split_a ran (line 6 of the module)';
    unlike $got{ours}, qr/^NEW_FID\t.*autosplit into/m, 'autosplit: no file id of its own';
    same_text($got{ours}, $got{oracle}, 'autosplit: same profile and source as Devel::NYTProf');
}

# nytprofhtml reads our profile without a complaint.
SKIP: {
    my $html = -x '/usr/bin/nytprofhtml' ? '/usr/bin/nytprofhtml' : undef;
    skip 'nytprofhtml is not installed', 2 if missing($html, 'nytprofhtml (libdevel-nytprof-perl)');
    my ($st, $out, $err) = run_cmd([$^X, $html, '-f', $files{modules}[0], '-o', "$dir/html"]);
    is $st, 0, 'nytprofhtml reads our profile';
    unlike $err, qr/warn|uninitiali[sz]ed|error/i, '... without a warning' or diag $err;
}

# addtimestamp
{
    my ($st, $file) = profile('ours', 'stamp', "$progs/closures.pl", 'addtimestamp=1');
    my @f = glob("$file.*");
    ok @f == 1 && $f[0] =~ /\.(\d+)\z/ && abs($1 - time) < 600, 'addtimestamp=1: the file name ends with .TIME';
}

# addpid, and a profile that is complete (PID_END) whatever the exit path.
{
    my ($st, $file) = profile('ours', 'addpid', "$progs/closures.pl", 'addpid=1');
    my @f = glob("$file.*");
    ok @f == 1 && $f[0] =~ /\.\d+\z/, 'addpid=1: the file name ends with .PID';
    for my $prog (qw(dies posix-exit execs control)) {
        my ($dst, $out) = run_cmd([$nytp, 'dump', '--strict', '--tags=PID_END', $files{$prog}[0]]);
        is $dst, 0, "$prog: the profile is complete";
        like $out, qr/^PID_END\t/m, "$prog: it ends with PID_END";
    }
}

# trace and log: the profiler's own messages, in a file; the profile is
# the same.
{
    my $log = "$dir/trace.log";
    unlink $log;
    my ($st, $file, $err) = profile('ours', 'trace', "$progs/fork.pl", "log=$log:trace=2");
    is $err, '', 'log=FILE:trace=2: nothing on standard error';
    my $text = slurp_file($log) // '';
    like $text, qr/^~ init_profiler/m, 'trace=1: start-up in the log';
    like $text, qr/^~ new pid \d+/m, 'trace=1: the fork in the log';
    like $text, qr/^New fid +1 .*fork\.pl/m, 'trace=2: new file ids in the log';
    my $want = masked_data($files{fork}[1]);
    my $got = masked_data($file);
    s/^option\ttrace\t\d+\n//m for $want, $got;
    same_text($got, $want, 'trace=2: the same profile as Devel::NYTProf\'s default one');
}

# trace=1 ends with how many times the clock was read (make bench's clock
# floor): at most once per statement event and call, at least once per
# statement event that neither continues a statement after a call nor
# stays on the line of the one before.
{
    my $log = "$dir/reads.log";
    unlink $log;
    my $script = scratch_script('reads.pl', <<'EOF');
sub f { return $_[0] + 1 }
my $s = 0;
for my $i (1 .. 1000) { $s = f($s) }
print "$s\n";
EOF
    my ($st, $file, $err) = profile('ours', 'reads', $script, "log=$log:trace=1");
    is $st, 0, 'trace=1, clock readings: the program ran';
    my ($reads) = (slurp_file($log) // '') =~ /^~ finish_profile \(.*, (\d+) clock readings\)$/m;
    my (%n, $out);
    (undef, $out) = run_cmd([$nytp, 'dump', $file]);
    $n{$1}++ while $out =~ /^(\w+)/mg;
    my ($lines, $discounts, $returns) = map { $n{$_} // 0 } qw(TIME_LINE DISCOUNT SUB_RETURN);
    ok defined $reads && $returns >= 1000 && $reads >= $returns
        && $reads <= $lines + $returns + 10,
        "trace=1: the clock readings at the end ($lines statement events, $discounts continuations, $returns returns)"
        or diag "readings: " . ($reads // 'none');

    # A loop whose every turn stays on one line reads the clock as it
    # enters the line and as it leaves, not at each statement.
    $script = scratch_script('reads-line.pl', <<'EOF');
my ($s, $t) = (0, 0);
for my $i (1 .. 1000) { $s += $i; $t ^= $s }
print "$s $t\n";
EOF
    unlink $log;
    ($st, $file, $err) = profile('ours', 'reads-line', $script, "log=$log:trace=1");
    is $st, 0, 'trace=1, clock readings of a one-line loop: the program ran';
    ($reads) = (slurp_file($log) // '') =~ /^~ finish_profile \(.*, (\d+) clock readings\)$/m;
    (undef, $out) = run_cmd([$nytp, 'dump', $file]);
    %n = ();
    $n{$1}++ while $out =~ /^(\w+)/mg;
    my $zero = () = $out =~ /^TIME_LINE\t0\t1\t2$/mg;
    ok defined $reads && ($n{TIME_LINE} // 0) >= 3000 && $reads < 20 && $zero >= 2990,
        "trace=1: a one-line loop of 3,000 statement events reads the clock a few times; its events have no time of their own ($zero)"
        or diag "readings: " . ($reads // 'none') . ", events " . ($n{TIME_LINE} // 0);
}

# A file first named inside a string eval's name (profiling starts in the
# eval, the program run by a relative name): its NEW_FID has the file's
# own name (not "eval-first.pl:9]", read past the name's end) and comes
# before the eval's in every file, the child's and later segments' too,
# which repeat every id in their headers (Devel::NYTProf's child writes
# the eval first; its reader then warns of an unknown invoking fid).
for my $opts ('start=no', 'start=no:rotate=0.05') {
    my $file = "$dir/eval-first.out";
    unlink $file, glob("$file.*");
    local $ENV{NYTPROF} = "$opts:file=$file";
    local $ENV{EVAL_FIRST_SECONDS} = $opts =~ /rotate/ ? 0.2 : 0;
    my ($st, $out, $err) = run_cmd([$^X, "-I$inc", '-d:NYTP', 'eval-first.pl'], cwd => $progs);
    is $out, "v=2\n", "eval first ($opts): the program ran" or diag $err;
    delete local $ENV{NYTPROF}; # Devel::NYTProf::Data's own module reads it
    my @files = ($file, glob("$file.*"));
    ok @files >= ($opts =~ /rotate/ ? 4 : 2), "eval first ($opts): the child's file, and segments: @files";
    for my $f (@files) {
        (my $short = $f) =~ s{.*/}{};
        my (undef, $chunks) = run_cmd([$nytp, 'dump', '--tags=NEW_FID', $f]);
        my (%seen, @bad, $named);
        for (split /\n/, $chunks // '') {
            my ($id, $parent, $name) = (split /\t/)[1, 2, 7];
            push @bad, "$id before its file $parent" if $parent && !$seen{$parent};
            $seen{$id} = 1;
            $named = 1 if $name eq "$progs/eval-first.pl";
            push @bad, "name '$name'" if $name =~ /eval-first\.pl:/ && $name !~ /^\(eval/;
        }
        ok $named && !@bad, "eval first ($opts), $short: the file by its name, before its evals"
            or diag join "\n", @bad, $chunks;
        my ($dst, undef, $derr) = run_cmd([$nytp, 'dump', '--data', $f]);
        is $derr, '', "eval first ($opts), $short: nytp reads it without a warning";
        my ($ost, undef, $oerr) = run_cmd([$^X, $oracle_data, $f]);
        is $oerr, '', "eval first ($opts), $short: so does Devel::NYTProf::Data";
    }
}

# A perl run by a profiled perl, with -d:NYTP in PERL5OPT and the same
# NYTPROF: it finds the profile file being written (locked) and writes
# FILE.PID, saying so; before, it removed the running program's profile
# and wrote its own in its place (Devel::NYTProf truncates it).
{
    my $file = "$dir/spawns.out";
    unlink $file, glob("$file.*");
    local $ENV{NYTPROF} = "file=$file";
    local $ENV{PERL5OPT} = "-I$inc -d:NYTP";
    my ($st, $out, $err) = run_cmd([$^X, "$progs/spawns-perl.pl"]);
    is $out, "child done\nparent done\n", 'a perl run by a profiled perl: both ran' or diag $err;
    my @child = glob("$file.*");
    is scalar(@child), 1, 'the spawned perl wrote FILE.PID';
    like $err,
        qr/^Devel::NYTP: \Q$file\E is being written by another process; this process writes \Q$file\E\.\d+ instead$/m,
        'and said so';
    delete local $ENV{PERL5OPT};
    my (undef, $parent) = run_cmd([$nytp, 'dump', '--data', '--strict', $file]);
    like $parent, qr/^sub_subinfo\tmain::pwork\t\[ \S+ calls 4 times/m, "the parent's profile is its own, whole";
    my (undef, $spawned) = run_cmd([$nytp, 'dump', '--data', '--strict', $child[0] // '-']);
    like $spawned, qr/^sub_subinfo\tmain::cwork\t\[ \S+ calls 5 times/m, "the spawned perl's is its own";
}

# A profile file that is there and cannot be replaced (immutable, as root
# can make it where the file system allows): FILE.PID, said so, where it
# was an error naming the file; the file itself is left as it was.
if ($> == 0 && system("touch '$dir/immutable.out' && chattr +i '$dir/immutable.out' 2>/dev/null") == 0) {
    my $file = "$dir/immutable.out";
    unlink glob("$file.*");
    local $ENV{NYTPROF} = "file=$file";
    my ($st, $out, $err) = run_cmd([$^X, "-I$inc", '-d:NYTP', '-e', 'sub f { 1 } f(); print "ran\n"']);
    system 'chattr', '-i', $file;
    is "$st $out", "0 ran\n", 'an immutable profile file: the program ran' or diag $err;
    like $err, qr/^Devel::NYTP: \Q$file\E is there and could not be replaced; this process writes \Q$file\E\.\d+ instead$/m,
        'and the profiler said where it wrote';
    my @beside = glob("$file.*");
    delete local $ENV{NYTPROF};
    my (undef, $data) = run_cmd([$nytp, 'dump', '--data', '--strict', $beside[0] // '-']);
    like $data, qr/^sub_subinfo\tmain::f\t\[ \S+ calls 1 times/m, 'FILE.PID is the whole profile';
    is -s $file, 0, 'the immutable file is as it was';
}

# perl -MO=Deparse: O.pm turns -c on while the program compiles, so no
# END block runs; the profile ends with the CHECK phase, as under perl -c
# (before, it was left without its end, as Devel::NYTProf's is).
for my $c ('-MO=Deparse', '-c') {
    my $file = "$dir/deparse.out";
    unlink $file;
    local $ENV{NYTPROF} = "file=$file";
    my ($st, $out, $err) = run_cmd([$^X, "-I$inc", '-d:NYTP', $c, '-e', 'sub f { 1 } print f()']);
    is $st, 0, "perl $c: ends normally" or diag $err;
    like $out, qr/print f\(\);/, "perl $c: Deparse's output" if $c =~ /Deparse/;
    delete local $ENV{NYTPROF};
    my ($dst, $data, $derr) = run_cmd([$nytp, 'dump', '--data', '--strict', $file]);
    is $dst, 0, "perl $c: the profile is whole" or diag $derr;
    like $data, qr/^sub_subinfo\tmain::f\t\[ 1:1-1 calls 0 times/m, "perl $c: the sub compiled, never called"
        if $c =~ /Deparse/; # (with -c no statement runs: -e has no file id, nor its subs)
}

# A daemon closes every descriptor it did not open, then opens its own
# files, one of which gets the number the profile's file had: not one
# byte of the profile goes into the program's files, and the profile goes
# on in its own file, whole (before, the profile's chunks went into the
# program's file, as Devel::NYTProf's do).
for my $opts ('', 'compress=0', 'sample=1000') {
    my $own = "$dir/daemon-files";
    system 'rm', '-rf', $own;
    mkdir $own or die "$own: $!";
    my $file = "$dir/daemon.out";
    unlink $file;
    local $ENV{NYTPROF} = join ':', grep { length } $opts, "file=$file";
    my ($st, $out, $err) = run_cmd([$^X, "-I$inc", '-d:NYTP', "$progs/daemon.pl", $own]);
    my $label = 'daemon' . ($opts ? " ($opts)" : '');
    is "$st $out", "0 done\n", "$label: the program ran" or diag $err;
    my $want = join '', map { "round $_\n" } 1 .. 100;
    my @bad = grep { (slurp_file("$own/own$_.txt") // '') ne $want } 1 .. 150;
    is "@bad", '', "$label: the program's 150 files hold only what it wrote";
    delete local $ENV{NYTPROF};
    my ($dst, $data, $derr) = run_cmd([$nytp, 'dump', '--data', '--strict', $file]);
    is $dst, 0, "$label: the profile is whole" or diag $derr;
    next if $opts =~ /sample/;
    like $data, qr/^sub_subinfo\tmain::work\t\[ \S+ calls 101 times/m, "$label: every call of work in it";
}

# Bad options and paths: errors before the program runs.
{
    my $marker = "$dir/ran";
    my $script = "$dir/touch.pl";
    open my $fh, '>', $script or die;
    print $fh "open my \$f, '>', '$marker' or die; print \"ran\\n\";\n";
    close $fh;

    unlink $marker;
    local $ENV{NYTPROF} = 'file=/nonexistent-dir/x.out';
    my ($st, $out, $err) = run_cmd([$^X, "-I$inc", '-d:NYTP', $script], cwd => $dir);
    isnt $st, 0, 'unwritable profile path: non-zero exit';
    like $err, qr{/nonexistent-dir/x\.out}, 'unwritable profile path: the error names it';
    ok !-e $marker, 'unwritable profile path: the program did not run';

    if (-w '/dev/full') {
        unlink $marker;
        $ENV{NYTPROF} = 'file=/dev/full';
        ($st, $out, $err) = run_cmd([$^X, "-I$inc", '-d:NYTP', $script], cwd => $dir);
        isnt $st, 0, 'a profile that cannot be written (/dev/full): non-zero exit';
        like $err, qr{cannot write profile '/dev/full': .*No space}, '/dev/full: the error names it';
        ok !-e $marker, '/dev/full: the program did not run';
    }

    # a file opened, then no way to write it (an unknown deflater): the
    # error, and no empty file left behind (there was one)
    {
        unlink $marker, "$dir/nodeflater.out";
        local $ENV{NYTP_DEFLATE} = 'no-such-deflater';
        $ENV{NYTPROF} = "file=$dir/nodeflater.out";
        ($st, $out, $err) = run_cmd([$^X, "-I$inc", '-d:NYTP', $script], cwd => $dir);
        isnt $st, 0, 'unknown deflater: non-zero exit';
        like $err, qr{cannot write profile '\Q$dir\E/nodeflater\.out': unknown deflater}, 'unknown deflater: the error';
        ok !-e "$dir/nodeflater.out" && !-e $marker, 'unknown deflater: no file left, the program did not run';
    }

    # a file opened whose header cannot be written (a file size limit of
    # 0, SIGXFSZ ignored: the write fails with EFBIG): the error, and no
    # empty file left (there was one); /dev/full above, not a file made
    # here, stays.  The limit is perl's alone, its messages go through a
    # pipe (a file would be limited too) and its status is printed.
    {
        unlink $marker, "$dir/fsize.out";
        $ENV{NYTPROF} = "file=$dir/fsize.out";
        ($st, $out, $err) = run_cmd(['sh', '-c',
            '(trap "" XFSZ; ulimit -f 0; "$@"; echo "status=$?") 2>&1 | cat', 'sh',
            $^X, "-I$inc", '-d:NYTP', $script], cwd => $dir);
        my ($pst) = ($out // '') =~ /^status=(\d+)$/m;
        ok defined $pst && $pst != 0, 'a header that cannot be written (ulimit -f 0): non-zero exit'
            or diag $out;
        like $out, qr{cannot write profile '\Q$dir\E/fsize\.out': .*File too large},
            'ulimit -f 0: the error names the file and why';
        ok !-e "$dir/fsize.out", 'ulimit -f 0: no empty profile left behind';
        ok !-e $marker, 'ulimit -f 0: the program did not run';
        ok -c '/dev/full', '/dev/full is still there' if -e '/dev/full';
    }

    $ENV{NYTPROF} = "no_such_option=1:file=$dir/bad.out";
    ($st, $out, $err) = run_cmd([$^X, "-I$inc", '-d:NYTP', $script], cwd => $dir);
    isnt $st, 0, 'unknown option: non-zero exit';
    like $err, qr/unknown option 'no_such_option'/, 'unknown option: named in the error';
    ok !-e $marker, 'unknown option: the program did not run';

    # usecputime=1: removed from Devel::NYTProf, which then does not
    # profile at all; never a profile silently measured with the wall clock
    for my $which (qw(ours theirs)) {
        unlink $marker;
        my $file = "$dir/cputime.$which.out";
        unlink $file;
        $ENV{NYTPROF} = "usecputime=1:file=$file";
        my @perl = $which eq 'ours' ? ($^X, "-I$inc", '-d:NYTP') : ($^X, '-d:NYTProf');
        ($st, $out, $err) = run_cmd([@perl, $script], cwd => $dir);
        ok $st == 0 && -e $marker, "usecputime=1 ($which): the program still runs";
        ok !-e $file, "usecputime=1 ($which): no profile is written";
        like $err, qr/usecputime.*clock=N/, "usecputime=1 ($which): says so, and to use clock=N";
        is scalar(() = $err =~ /usecputime/g), 1, "usecputime=1 ($which): one message";
    }
}

# errno: a program's look at $! after a failed system call sees what the
# call left, whatever the profiler did in between (statements, calls,
# returns, the buffer handed on, slow ops), with every kind of option.
for my $opts ('', 'compress=0', 'stmts=0', 'calls=2:slowops=1', 'blocks=1', 'leave=0',
    'sample=1000') {
    local $ENV{NYTPROF} = join ':', grep { length } $opts, "file=$dir/errno.out";
    my ($st, $out, $err) = run_cmd([$^X, "-I$inc", '-d:NYTP', "$progs/errno.pl"], cwd => $dir);
    is $out, "ok ok ok ok ok ok\n", "errno ($opts): \$! as the failed open left it" or diag $err;
}

done_testing;
