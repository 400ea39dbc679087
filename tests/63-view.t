#!/usr/bin/perl
# --focus, --ignore and --hide (issue 39) on real profiles: perltidy
# formatting a small file and a Moose program (tests/programs/moose-sqlite.pl),
# through every report that takes them: calls, flame (collapsed and SVG),
# top, pprof (read by go tool pprof) and speedscope (read by speedscope).
# The expected values are computed here from the unfiltered call paths of
# 'nytp calls' (pprof's rules: focus keeps the stacks through a match,
# ignore drops them, hide takes the frames out and gives their exclusive
# time to the nearest caller left, main::RUNTIME when none), then compared
# with what each filtered report says: the subs' exclusive and inclusive
# times, the total (unchanged by hide) and the share shown in the first
# line.  The reports that do not take the options refuse them (exit 2).
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;
use JSON::PP;

my $nytp = nytp();
my $dir = scratch_dir();

need(-x '/usr/bin/perltidy', 'perltidy is not installed (make deps)');
need(!system($^X, '-MMoose', '-MDBD::SQLite', '-e1'), 'Moose or DBD::SQLite is not installed (make deps)');
need(!system($^X, '-MDevel::NYTProf::Core', '-e1'), 'Devel::NYTProf is not installed (make deps)');
# JSON::PP takes seconds over the larger files; a faster decoder when one
# is installed
my $json = eval { require Cpanel::JSON::XS; Cpanel::JSON::XS->new->utf8 } // JSON::PP->new->utf8;
my $go = (grep { -x } map { "$_/go" } split /:/, $ENV{PATH})[0];

# ---- the profiles ----------------------------------------------------------

# perltidy on a few hundred lines of its own tokenizer (about a second)
my $src = "$dir/small.pm";
{
    open my $in, '<', '/usr/share/perl5/Perl/Tidy/Tokenizer.pm' or die "Tokenizer.pm: $!";
    open my $out, '>', $src or die;
    while (<$in>) { last if $. > 120; print $out $_ }
    close $out;
}
my $tidy = "$dir/tidy.out";
{
    local $ENV{NYTPROF} = "file=$tidy";
    my ($st, undef, $err) = run_cmd([$^X, '-d:NYTProf', '/usr/bin/perltidy', '-npro', '-st', '-se', $src]);
    die "perltidy profile: $err" unless -s $tidy;
}
my $moose = fresh_profile('moose', repo() . '/tests/programs/moose-sqlite.pl');

# ---- helpers ----------------------------------------------------------------

sub unescape_frame { my $f = shift; $f =~ s/%([0-9A-F]{2})/chr hex $1/ge; return $f }

sub ticks_per_sec {
    my $file = shift;
    my (undef, $out) = run_cmd([$nytp, 'dump', '--data', $file]);
    return $out =~ /^attribute\tticks_per_sec\t(\d+)$/m ? $1 : die "no ticks_per_sec in $file";
}

# [[frames], ticks] of 'nytp calls' with @opts, and its '# ' line
sub paths_of {
    my ($file, @opts) = @_;
    my ($st, $out, $err) = run_cmd([$nytp, 'calls', @opts, $file]);
    die "nytp calls @opts: $st $err" if $st;
    my ($head, @p) = ('');
    for (split /\n/, $out) {
        if (/^# (.*)/) { $head = $1; next }
        my ($path, $v) = /^(.*) (\d+)$/ or die "bad line $_";
        push @p, [[map { unescape_frame($_) } split /;/, $path], $v];
    }
    return (\@p, $head, $out);
}

# What the view of the unfiltered paths should be: per leaf sub its
# exclusive ticks, per sub on a path its inclusive ticks (once per path).
# A frame matches $re, a regular expression on its name or a sub taking
# the name.
sub expect {
    my ($paths, $op, $re) = @_;
    my $m = ref $re eq 'CODE' ? $re : sub { $_[0] =~ /$re/ };
    my (%excl, %incl, $total, $shown);
    for my $p (@$paths) {
        my ($frames, $v) = @$p;
        $total += $v;
        my @f = @$frames;
        next if $op eq 'focus' && !grep { $m->($_) } @f;
        next if $op eq 'ignore' && grep { $m->($_) } @f;
        if ($op eq 'hide') {
            @f = grep { !$m->($_) } @f;
            @f = ('main::RUNTIME') unless @f;
        }
        $shown += $v;
        $excl{$f[-1]} += $v;
        my %seen;
        $incl{$_} += $v for grep { !$seen{$_}++ } @f;
    }
    return {excl => \%excl, incl => \%incl, total => $total, shown => $shown // 0};
}

# nytp top --json without its lines table (thousands of rows JSON::PP
# takes seconds to decode, and these checks do not read)
sub top_json {
    my ($js) = @_;
    $js =~ s/"lines":\[\{.*?\}\],"files":\[/"lines":[],"files":[/s;
    return $json->decode($js);
}

sub unhtml {
    my $t = shift;
    $t =~ s/&lt;/</g;
    $t =~ s/&gt;/>/g;
    $t =~ s/&quot;/"/g;
    $t =~ s/&#39;/'/g;
    $t =~ s/&amp;/&/g;
    return $t;
}

sub leaf_sums {
    my ($paths) = @_;
    my %s;
    $s{$_->[0][-1]} += $_->[1] for @$paths;
    return \%s;
}

# per-sub values a and b (ticks) agree within tol; every sub of b is in a
sub same_subs {
    my ($got, $want, $tol, $label) = @_;
    my @bad;
    for my $k (sort keys %$want) {
        next if abs($want->{$k}) <= $tol && !exists $got->{$k};
        push @bad, sprintf('%s: got %.0f want %.0f', $k, $got->{$k} // 0, $want->{$k})
            if abs(($got->{$k} // 0) - $want->{$k}) > $tol;
    }
    for my $k (sort keys %$got) {
        push @bad, sprintf('%s: got %.0f, not expected', $k, $got->{$k})
            if !exists $want->{$k} && abs($got->{$k}) > $tol;
    }
    ok !@bad, $label or diag join "\n", @bad[0 .. ($#bad < 9 ? $#bad : 9)];
}

# An evented speedscope file's self time per frame name (ns), the problems
# of its events (not nested, back in time), and how many frames with self
# time have a frame matching $re on their stack (matched), match it
# themselves (hidden) or have none (outside).
sub evented_self {
    my ($sj, $re) = @_;
    my $frames = $sj->{shared}{frames};
    my @name = map { $_->{name} } @$frames;
    my @m = map { /$re/ ? 1 : 0 } @name;
    my (%self, @problems, %n);
    $n{$_} = 0 for qw(matched hidden outside);
    for my $p (@{$sj->{profiles}}) {
        my $matches = 0;    # frames of the stack matching $re
        push @problems, speedscope_events(
            $p,
            sub { $matches += $m[ $_[0] ] },
            sub {
                my ($f, $own) = @_;
                $self{ $name[$f] } += $own;
                if ($own > 0) {
                    $n{matched}++ if $matches;
                    $n{hidden}++ if $m[$f];
                    $n{outside}++ unless $matches;
                }
                $matches -= $m[$f];
            });
    }
    return (\%self, \@problems, \%n);
}

sub share_ok {
    my ($line, $op, $re, $e, $label) = @_;
    like $line, qr/^\Q$op '$re'\E: /, "$label: says what the view is";
    my ($pct) = $line =~ /: ([\d.]+)% of /;
    ok defined $pct && abs($pct - 100 * $e->{shown} / $e->{total}) <= 0.051,
        "$label: says the share shown" or diag "$line; want " . 100 * $e->{shown} / $e->{total};
}

# ---- html's call graph and calling lines --------------------------------------

# The arcs a view gives the call graph, from the unfiltered paths with
# their calls ('nytp calls --calls'): each call of a shown sub is an arc
# from its nearest shown caller (main::RUNTIME when none); and, by the
# edge of the profile it came through (that caller and its child on the
# path), the calls the view gives each shown sub: {"caller\tchild"}{sub}.
sub view_calls {
    my ($cpaths, $op, $re) = @_;
    my (%arc, %via);
    for my $p (@$cpaths) {
        my ($frames, $n) = @$p;
        my @f = @$frames; # names as short_anon makes them
        next if $op eq 'focus' && !grep { /$re/ } @f;
        next if $op eq 'ignore' && grep { /$re/ } @f;
        next if $op eq 'hide' && $f[-1] =~ /$re/;
        my $up = $#f - 1;
        $up-- while $op eq 'hide' && $up >= 0 && $f[$up] =~ /$re/;
        my $caller = $up >= 0 ? $f[$up] : 'main::RUNTIME';
        $arc{"$caller\t$f[-1]"} += $n;
        $via{"$caller\t$f[$up + 1]"}{$f[-1]} += $n;
    }
    return (\%arc, \%via);
}

# A name as html shows it, and as compared: string evals numbered 0, an
# anonymous sub's file by its last component (html shortens @INC paths).
my %short;
sub short_anon {
    my $n = shift;
    return $short{$n} if exists $short{$n};
    my $k = $n;
    $n =~ s/\(eval \d+\)/(eval 0)/g;
    $n =~ s{__ANON__\[[^\]]*?([^/\]]+:\d+)\]}{__ANON__[$1]}g;
    return $short{$k} = $n;
}

# The arcs of an html report's call graph (nytp.js), by sub names.
sub html_arcs {
    my ($h) = @_;
    my $js = slurp_file("$h/nytp.js") // '';
    my ($subs) = $js =~ /var nytpSubs = (\[.*?\]);\nvar nytpEdges/s;
    my ($edges) = $js =~ /var nytpEdges = (\[.*?\]);\n/s;
    my @names = map { short_anon($_->[0]) } @{$json->decode($subs // '[]')};
    my %arc;
    $arc{"$names[$_->[0]]\t$names[$_->[1]]"} += $_->[2] // 0 for @{$json->decode($edges // '[]')};
    return \%arc;
}

sub secs {
    my ($n, $u) = $_[0] =~ /^([\d.]+)(s|ms|\x{b5}s|\xc2\xb5s|ns)$/ or return 0;
    return $n * ({s => 1, ms => 1e-3, ns => 1e-9}->{$u} // 1e-6);
}

# The calling lines of an html page: line => {sub => calls} of the calls
# made there, and the time of every call note (hidden time included).
sub html_call_lines {
    my ($page) = @_;
    my (%calls, %time);
    for my $row (split /<tr id=L/, $page) {
        my ($line) = $row =~ /^(\d+)>/ or next;
        while ($row =~ m{<div>spent ([^ ]+) (making (\d+) calls? to|in calls to|in hidden) <a[^>]*>(?:<span title="([^"]*)">)?([^<]+)}g) {
            my ($t, $how, $n, $name) = ($1, $2, $3 // 0, unhtml($4 // $5));
            $time{$line} += secs($t);
            next if $how eq 'in hidden';
            $calls{$line}{short_anon($name)} += $n;
        }
    }
    return (\%calls, \%time);
}

# The call sites of a profile (nytp dump --data): [called, fid, line,
# count, [callers]], and the fid of the file named like re.
sub dump_sites {
    my ($file, $re) = @_;
    my (undef, $out) = run_cmd([$nytp, 'dump', '--data', $file]);
    my ($fid) = $out =~ /^fid_fileinfo\t(\d+)\t\[ \S*$re /m;
    my @s;
    while ($out =~ /^sub_subinfo\t(.*?)\tcalled_by\t(\d+):(\d+)\t\[ (\d+) (?:\S+ ){6}(.*) \]$/mg) {
        push @s, [$1, $2, $3, $4, [split /\|/, $5]];
    }
    return (\@s, $fid);
}

# ---- every report, both profiles ---------------------------------------------

my %views = (
    $moose => [['hide', '^(Moose|Class::MOP)::'], ['focus', '^Inventory::add$'], ['ignore', '^Inventory::add$']],
    $tidy => [['hide', '^Perl::Tidy::Tokenizer::'], ['focus', '^Perl::Tidy::Formatter::'],
              ['ignore', '^Perl::Tidy::Formatter::']],
);

for my $file ($moose, $tidy) {
    my $name = $file eq $moose ? 'moose' : 'perltidy';
    my $tps = ticks_per_sec($file);
    my ($all) = paths_of($file);
    # for html's call graph: the arcs of the unfiltered report that agree
    # with the call tree (a site calling from several subs counts for each
    # of them, and the main program calls from main::NULL in compile time)
    my ($all_calls) = paths_of($file, '--calls');
    $all_calls = [map { [[map { short_anon($_) } @{$_->[0]}], $_->[1]] } @$all_calls];
    my $h0 = "$dir/html0";
    run_cmd([$nytp, 'html', '-o', $h0, $file]);
    my $arcs0 = html_arcs($h0);
    my ($want0) = view_calls($all_calls, '', qr/(?!)/);
    my %agrees; # callers whose every arc agrees
    $agrees{(split /\t/)[0]} //= 1 for keys %$arcs0, keys %$want0;
    for (keys %$arcs0, keys %$want0) {
        my ($c) = split /\t/;
        $agrees{$c} = 0 if ($arcs0->{$_} // 0) != ($want0->{$_} // 0) || $c eq 'main::RUNTIME';
    }
    my ($sites, $script_fid) = $file eq $moose ? dump_sites($file, 'moose-sqlite\.pl') : ([], undef);
    my $script_page = $file eq $moose ? (grep { /moose-sqlite-pl\.html$/ } glob "$h0/f*.html")[0] : undef;
    my ($lines0, $ltime0) = html_call_lines(slurp_file($script_page // '/dev/null') // '');
    for my $v (@{$views{$file}}) {
        my ($op, $re) = @$v;
        my $label = "$name --$op='$re'";
        my $e = expect($all, $op, $re);
        my $tol = 1e-4 * $e->{total} + 2;
        ok $e->{shown} > 0 && $e->{shown} <= $e->{total}, "$label: the view has something to show";
        ok $e->{shown} < $e->{total}, "$label: and leaves something out" if $op ne 'hide';

        # calls
        my ($got, $head, $cl) = paths_of($file, "--$op=$re");
        share_ok($head, $op, $re, $e, "$label calls");
        same_subs(leaf_sums($got), $e->{excl}, $tol, "$label calls: exclusive ticks per sub");
        my $sum = 0;
        $sum += $_->[1] for @$got;
        ok abs($sum - $e->{shown}) <= $tol, "$label calls: the total shown" or diag "$sum vs $e->{shown}";
        if ($op eq 'hide') {
            ok !(grep { grep { /$re/ } @{$_->[0]} } @$got), "$label calls: no hidden sub left";
            ok abs($sum - $e->{total}) <= $tol, "$label calls: the total is unchanged";
        }
        if ($op eq 'focus') {
            ok !(grep { !grep { /$re/ } @{$_->[0]} } @$got), "$label calls: every stack goes through it";
        }

        # flame: the same collapsed lines; the SVG says what was left out
        my ($st, $fl) = run_cmd([$nytp, 'flame', "--$op=$re", $file]);
        is $fl, $cl, "$label flame: the collapsed lines of calls";
        my ($st3, $svg) = run_cmd([$nytp, 'flame', '--svg', "--$op=$re", $file]);
        is $st3, 0, "$label flame --svg: exit 0";
        like $svg, qr/\Q$op\E (?:'|&#39;)/, "$label flame --svg: the subtitle says what was left out";

        # top --json: subs' times, and the view line
        my ($st4, $js, $err4) = run_cmd([$nytp, 'top', '--json', '-n', '0', "--$op=$re", $file]);
        is $st4, 0, "$label top: exit 0" or diag $err4;
        my $t = top_json($js);
        share_ok($t->{view}, $op, $re, $e, "$label top");
        my (%te, %ti);
        for my $s (@{$t->{subs}}) {
            (my $n = $s->{name}) =~ s/\(eval \d+\)/(eval 0)/g;
            $te{$n} += $s->{excl} * $tps;
            $ti{$n} += $s->{incl} * $tps if $s->{excl} || $s->{incl};
        }
        same_subs(\%te, $e->{excl}, $tol, "$label top: exclusive time per sub");
        same_subs(\%ti, $e->{incl}, $tol, "$label top: inclusive time per sub (every stack through it)");
        ok abs($t->{totals}{sub_excl} * $tps - $e->{shown}) <= $tol, "$label top: time in subs is the share shown";

        # pprof, read by go tool pprof (a second and a half a run: every view
        # of the Moose program, perltidy's hide)
        SKIP: if ($file eq $moose || $op eq 'hide') {
            skip 'go is not installed (make deps)', 3 unless $go;
            local $ENV{HOME} = $dir;
            local $ENV{GOCACHE} = "$dir/gocache";
            local $ENV{GOPATH} = "$dir/gopath";
            local $ENV{GOTOOLCHAIN} = 'local';
            local $ENV{GOPROXY} = 'off';
            local $ENV{GOFLAGS} = '';
            local $ENV{PPROF_TMPDIR} = $dir;
            my $pb = "$dir/v.pb.gz";
            my ($s5, undef, $e5) = run_cmd([$nytp, 'pprof', "--$op=$re", '-o', $pb, $file]);
            is $s5, 0, "$label pprof: exit 0" or diag $e5;
            my ($s6, $top) = run_cmd([$go, 'tool', 'pprof', '-top', '-nodecount=100000', '-nodefraction=0', '-edgefraction=0', '-unit=ns', $pb]);
            my %flat;
            for (split /\n/, $top) {
                $flat{$2} += $1 / 1e9 * $tps if /^\s*(\d+)ns\s+\S+\s+\S+\s+\d+ns\s+\S+\s+(.*)$/;
            }
            same_subs(\%flat, $e->{excl}, $tol + 1e-3 * $tps, "$label pprof: go tool pprof's flat time per sub");
            my ($head) = $top =~ /^(\Q$op '\E.*)$/m; # the comment, in -top's header
            share_ok($head // '', $op, $re, $e, "$label pprof comment");
        }

        # html: the index says it; subs.html has the view's times (data-v:
        # seconds), the flame graph the stacks left
        my $h = "$dir/html";
        my ($s9, undef, $e9) = run_cmd([$nytp, 'html', "--$op=$re", '-o', $h, $file]);
        is $s9, 0, "$label html: exit 0" or diag $e9;
        my $index = slurp_file("$h/index.html") // '';
        my ($hv) = $index =~ m{<dt>View<dd>([^<]*)};
        share_ok(unhtml($hv // ''), $op, $re, $e, "$label html index");
        my (%he, %hi);
        my $subs = slurp_file("$h/subs.html") // '';
        for my $row (split /<tr id=S\d+>/, $subs) {
            # a shortened name has the whole one in a title
            my ($x, $i, $full, $n) =
                $row =~ m{^.*?data-v=([^ >]+)>[^<]*<td data-v=([^ >]+)>.*?<td class=name><a[^>]*>(?:<span title="([^"]*)">)?([^<]+)}
                or next;
            ($n = unhtml($full // $n)) =~ s/\(eval \d+\)/(eval 0)/g;
            $he{$n} += $x * $tps;
            $hi{$n} += $i * $tps if $x || $i;
        }
        same_subs(\%he, $e->{excl}, $tol, "$label html subs.html: exclusive time per sub");
        same_subs(\%hi, $e->{incl}, $tol, "$label html subs.html: inclusive time per sub");
        # the call graph's arcs: those of the view, from the unfiltered
        # paths (callers whose arcs the unfiltered report has right)
        my ($want_arcs, $via) = view_calls($all_calls, $op, $re);
        my $arcs = html_arcs($h);
        my (@bad, $compared);
        for my $k (sort keys %{{%$arcs, %$want_arcs}}) {
            my ($c, $x) = split /\t/, $k;
            next unless $agrees{$c};
            $compared++;
            push @bad, "$c -> $x: got " . ($arcs->{$k} // 'none') . ' want ' . ($want_arcs->{$k} // 'none')
                if ($arcs->{$k} // 0) != ($want_arcs->{$k} // 0);
        }
        ok $compared && !@bad, "$label html call graph: the arcs of the view ($compared compared)"
            or diag join "\n", @bad[0 .. ($#bad < 9 ? $#bad : 9)];
        if ($op eq 'hide') {
            my @left = grep { /$re/ } map { split /\t/ } grep { $arcs->{$_} } keys %$arcs;
            ok !@left, "$label html call graph: no arc to or from a hidden sub" or diag "@left[0..2]";
        }
        if ($file eq $moose) {
            # the script's calling lines: each line whose calls are those of
            # its caller to the sub called (no other line makes them) has the
            # view's calls of that edge, to the subs the view shows
            my $page = (grep { /moose-sqlite-pl\.html$/ } glob "$h/f*.html")[0];
            my ($lines, $ltime) = html_call_lines(slurp_file($page // '/dev/null') // '');
            my (%edge_sites, %want, %skip);
            for my $st (@$sites) {
                $edge_sites{"$_\t$st->[0]"}++ for @{$st->[4]};
            }
            for my $st (@$sites) {
                my ($f, $fid, $line, undef, $callers) = @$st;
                next unless defined $script_fid && $fid == $script_fid;
                my $fn = short_anon($f);
                if (@$callers != 1 || $edge_sites{"$callers->[0]\t$f"} != 1) {
                    $skip{$line} = 1;
                    next;
                }
                my $c = $callers->[0] =~ /^main::(?:NULL|RUNTIME)$/ ? 'main::RUNTIME' : $callers->[0];
                next if $op eq 'hide' && $c =~ /$re/; # the hidden caller's calls are its callers' now
                my $to = $via->{"$c\t$fn"} // {};
                $want{$line}{$_} += $to->{$_} for keys %$to;
            }
            my (@lbad, $lcompared, $moved);
            for my $line (sort { $a <=> $b } grep { !$skip{$_} } keys %{{%want, %$lines}}) {
                my %w = map { $_ => $want{$line}{$_} } grep { $want{$line}{$_} } keys %{$want{$line} // {}};
                my %g = map { $_ => $lines->{$line}{$_} } grep { $lines->{$line}{$_} } keys %{$lines->{$line} // {}};
                $lcompared++;
                $moved++ if grep { !exists $lines0->{$line}{$_} } keys %g;
                push @lbad, "line $line: got " . join(',', map { "$_=$g{$_}" } sort keys %g) . ' want '
                    . join(',', map { "$_=$w{$_}" } sort keys %w)
                    if join(',', map { "$_=$g{$_}" } sort keys %g) ne join(',', map { "$_=$w{$_}" } sort keys %w);
            }
            ok $lcompared && !@lbad, "$label html calling lines: each line's calls are the view's ($lcompared lines)"
                or diag join "\n", @lbad[0 .. ($#lbad < 9 ? $#lbad : 9)];
            if ($op eq 'hide') {
                ok $moved, "$label html calling lines: calls moved to the subs the hidden ones called";
                my @tbad = grep { abs($ltime->{$_} - $ltime0->{$_}) > 0.01 * $ltime0->{$_} + 3e-6 * 30 } keys %$ltime0;
                ok !@tbad, "$label html calling lines: each line's time in calls (hidden included) unchanged"
                    or diag join "\n", map { "line $_: $ltime->{$_} was $ltime0->{$_}" } @tbad[0 .. ($#tbad < 5 ? $#tbad : 5)];
                unlike slurp_file($page // '/dev/null') // '', qr{ making \d+ calls? to <a[^>]*>(?:<span[^>]*>)?(?:Moose|Class::MOP)::},
                    "$label html calling lines: no call to a hidden sub";
            }
            # durations are per sub: where the view keeps a sub's calls in
            # part, its histogram says it is of all of them
            my @notes;
            for (glob "$h/f*.html") {
                my $pg = slurp_file($_) // '';
                push @notes, [map { tr/,//dr } $1, $2]
                    while $pg =~ /durations of all ([\d,]+) calls in the profile, not only the ([\d,]+) the view keeps/g;
            }
            if ($op eq 'hide') {
                ok !@notes, "$label html durations: hiding keeps every call of a shown sub: whole, no note";
            } else {
                ok @notes && !(grep { $_->[1] >= $_->[0] } @notes),
                    "$label html durations: subs whose calls the view keeps in part say theirs are all the calls";
            }
        }
        my $hflame = slurp_file("$h/flame.svg") // '';
        my @titles = map { unhtml($_) } $hflame =~ m{<title>([^<]*)}g;
        if ($op eq 'hide') {
            ok @titles > 1 && !(grep { /$re/ } @titles), "$label html flame graph: no hidden frame";
        }

        # html --base: both sides through the view, as diff; the index says
        # what each side left out, Before and After are the view's times
        if ($file eq $moose) {
            my $hb = "$dir/htmlbase";
            my ($sb, undef, $eb) = run_cmd([$nytp, 'html', "--base=$file", "--$op=$re", '-o', $hb, $file]);
            is $sb, 0, "$label html --base: exit 0" or diag $eb;
            my ($bv) = (slurp_file("$hb/index.html") // '') =~ m{<dt>View<dd>([^<]*)};
            my ($vb, $vn) = unhtml($bv // '') =~ /^BASE: (.*); NEW: (.*?)\s*$/;
            share_ok($vb // '', $op, $re, $e, "$label html --base: BASE");
            share_ok($vn // '', $op, $re, $e, "$label html --base: NEW");
            my (%before, %after);
            for my $row (split /<tr id=S\d+>/, slurp_file("$hb/subs.html") // '') {
                my ($full, $n, $b, $a) = $row =~
                    m{<td class=name><a[^>]*>(?:<span title="([^"]*)">)?([^<]+).*?<td class=cmp data-v=([^ >]+)>[^<]*<td class=cmp data-v=([^ >]+)>}
                    or next;
                ($n = unhtml($full // $n)) =~ s/\(eval \d+\)/(eval 0)/g;
                $before{$n} += $b * $tps;
                $after{$n} += $a * $tps;
            }
            same_subs(\%before, $e->{excl}, $tol, "$label html --base: Before, the view of BASE");
            same_subs(\%after, $e->{excl}, $tol, "$label html --base: After, the view of NEW");
        }

        # diff of the profile with itself: both sides the view's times;
        # --svg says the view and draws the stacks left
        if ($file eq $moose) {
            my ($sd, $dj, $ed) = run_cmd([$nytp, 'diff', '--json', '-n', '0', "--$op=$re", $file, $file]);
            is $sd, 0, "$label diff: exit 0" or diag $ed;
            my $d = top_json($dj);
            like $d->{view}, qr/^BASE: \Q$op '$re'\E: .*; NEW: \Q$op '$re'\E: /, "$label diff: says the view of each side";
            my (%de, %di);
            for my $r (@{$d->{subs}}) {
                (my $n = $r->{name}) =~ s/\(eval \d+\)/(eval 0)/g;
                $de{$n} += ($r->{base}{excl} // 0) * $tps;
                $di{$n} += ($r->{new}{incl} // 0) * $tps if $r->{new}{excl} || $r->{new}{incl};
            }
            same_subs(\%de, $e->{excl}, $tol, "$label diff: BASE's exclusive time per sub");
            same_subs(\%di, $e->{incl}, $tol, "$label diff: NEW's inclusive time per sub");
            my ($sv, $dsvg) = run_cmd([$nytp, 'diff', '--svg', "--$op=$re", $file, $file]);
            like $dsvg, qr/BASE: \Q$op\E (?:'|&#39;)/, "$label diff --svg: the subtitle says the view";
            my @dt = map { unhtml($_) } $dsvg =~ m{<title>([^<]*)}g;
            ok @dt > 1 && !(grep { /$re/ } @dt), "$label diff --svg: no hidden frame" if $op eq 'hide';
        }

        # speedscope: the time line, filtered call by call (hidden frames not
        # drawn, their own time their callers'), the same self time per
        # frame; --sampled: one sampled profile of the paths left.  (The
        # time line of perltidy is 300,000 events: only its hide.)
        next unless $file eq $moose || $op eq 'hide';
        my $ss = "$dir/v.json";
        my ($s8, undef, $e8) = run_cmd([$nytp, 'speedscope', "--$op=$re", '-o', $ss, $file]);
        is $s8, 0, "$label speedscope: exit 0" or diag $e8;
        my $sj = $json->decode(slurp_file($ss));
        is_deeply [map { $_->{type} } @{$sj->{profiles}}], ['evented'], "$label speedscope: the time line, one process";
        my $prof = $sj->{profiles}[0];
        my ($ssline) = $prof->{name} =~ /\x{2014} (.*)/;
        share_ok($ssline // '', $op, $re, $e, "$label speedscope name");
        my ($self, $problems, $stacks) = evented_self($sj, $re);
        is_deeply $problems, [], "$label speedscope: events nest and run forward";
        same_subs({map { $_ => $self->{$_} / 1e9 * $tps } keys %$self}, $e->{excl}, $tol,
                  "$label speedscope: self time per frame on the time line");
        is $stacks->{hidden}, 0, "$label speedscope: no hidden frame drawn" if $op eq 'hide';
        is $stacks->{outside}, 0, "$label speedscope: all self time under the focus" if $op eq 'focus';
        is $stacks->{matched}, 0, "$label speedscope: no ignored frame drawn" if $op eq 'ignore';
        next unless $op eq 'hide';
        my ($s10, undef, $e10) = run_cmd([$nytp, 'speedscope', '--sampled', "--$op=$re", '-o', $ss, $file]);
        is $s10, 0, "$label speedscope --sampled: exit 0" or diag $e10;
        $sj = $json->decode(slurp_file($ss));
        $prof = $sj->{profiles}[0];
        is_deeply [map { $_->{type} } @{$sj->{profiles}}], ['sampled'], "$label speedscope --sampled: one sampled profile";
        my %sampled;
        for my $i (0 .. $#{$prof->{samples}}) {
            my $leaf = $sj->{shared}{frames}[$prof->{samples}[$i][-1]]{name};
            $sampled{$leaf} += $prof->{weights}[$i] / 1e9 * $tps;
        }
        same_subs(\%sampled, $e->{excl}, $tol, "$label speedscope --sampled: self time per frame");
    }
}

# speedscope itself opens a filtered file (schema and the viewer)
SKIP: {
    my $node = (grep { -x } map { "$_/node" } split /:/, $ENV{PATH})[0];
    my $modules = repo() . '/tests/node_modules';
    skip 'node, chromium or the npm test packages are missing (make deps)', 2
        unless $node && -x '/usr/bin/chromium' && -d "$modules/playwright-core";
    my $ss = "$dir/hide.json";
    run_cmd([$nytp, 'speedscope', '--hide=^(Moose|Class::MOP)::', '-o', $ss, $moose]);
    my ($st, $out, $err) = run_cmd(['timeout', '180', $node, "$FindBin::Bin/lib/speedscope-check.js", $ss, $dir]);
    my $r = eval { decode_json($out) } // {};
    is_deeply $r->{schemaErrors}, [], 'speedscope: the filtered file validates' or diag "$out $err";
    is_deeply [@{$r->{consoleErrors} // ['?']}, @{$r->{pageErrors} // []}], [],
        'speedscope: opens it without errors';
    # what speedscope read: its export of the file, the same time line
    my ($ours) = evented_self(decode_json(slurp_file($ss)), '^$');
    my ($theirs, $problems) = evented_self($r->{exported} // {profiles => [], shared => {frames => []}}, '^$');
    is_deeply $problems, [], 'speedscope: its export of the filtered time line nests';
    my $sum = 0;
    $sum += $_ for values %$ours;
    same_subs($theirs, $ours, 1e-6 * $sum, 'speedscope: it reads the same self time per frame');
    ok keys %$ours > 1, '... of the frames drawn';
}

# ---- the same layer: file: patterns, recursion folding, bad expressions -------

{
    # file: by the subs' files: the Moose program's own subs are in the script
    my ($st, $js) = run_cmd([$nytp, 'top', '--json', '-n', '0', '--focus=file:moose-sqlite\.pl$', $moose]);
    my $t = top_json($js);
    like $t->{view}, qr/^focus 'file:moose-sqlite\\\.pl\$': /, 'top --focus=file:RE: says so';
    my ($all) = paths_of($moose);
    my (undef, $json_all) = run_cmd([$nytp, 'top', '--json', '-n', '0', $moose]);
    my %file_of = map { ($_->{name} => $_->{file}) } @{top_json($json_all)->{subs}};
    my $e = expect([map { [[map { ($file_of{$_} // '') =~ /moose-sqlite\.pl$/ ? 'F' : $_ } @{$_->[0]}], $_->[1]] } @$all],
                   'focus', '^F$');
    my $tps = ticks_per_sec($moose);
    ok abs($t->{totals}{sub_excl} * $tps - $e->{shown}) <= 1e-4 * $e->{total} + 2,
        'top --focus=file:RE: the stacks through a sub of that file';
    # lines and files: a hidden file's statements stay in the total, those
    # outside a file focus leave it (the files table of the unfiltered
    # report says how much each file had)
    my $files_all = top_json($json_all)->{files};
    my $in_pl = 0;
    $in_pl += $_->{time} for grep { $_->{file} =~ /\.pl$/ } @$files_all;
    my $stmts = top_json($json_all)->{totals}{statements};
    my (undef, $jh) = run_cmd([$nytp, 'top', '--json', '-n', '0', '--hide=file:\.pm$', $moose]);
    my (undef, $jf) = run_cmd([$nytp, 'top', '--json', '-n', '0', '--focus=file:\.pl$', $moose]);
    ok abs(top_json($jh)->{totals}{statements} - $stmts) < 1e-9, 'top --hide=file:RE: the statement total stays';
    ok abs(top_json($jf)->{totals}{statements} - $in_pl) < 1e-9, 'top --focus=file:RE: the statements of those files';
    ok !(grep { $_->{file} !~ /\.pl$/ } @{top_json($jf)->{files}}), '... and only those files';
    like top_json($jf)->{view}, qr/statements left out: /, '... saying so';
    my ($ls_st, $lines) = run_cmd([$nytp, 'top', '--lines', '-n', '0', '--hide=file:\.pm$', $moose]);
    unlike $lines, qr/\.pm:\d+ /, 'top --hide=file:RE: no line of a hidden file';
    like $lines, qr/moose-sqlite\.pl:\d+ /, '... the others stay';
    # csv: a line view, only file: patterns; the files left out are not written
    my $cd = "$dir/csv";
    my ($csst, undef, $cserr) = run_cmd([$nytp, 'csv', '-o', $cd, '--focus=file:moose-sqlite\.pl$', $moose]);
    is $csst, 0, 'csv --focus=file:RE: exit 0' or diag $cserr;
    my @csv = glob "$cd/*.csv";
    ok @csv && !(grep { !/moose-sqlite-pl-\d+-line\.csv$/ } @csv), 'csv --focus=file:RE: only that file written'
        or diag "@csv";
    my ($vl) = (slurp_file($csv[0] // '') // '') =~ /^# View: (.*)$/m;
    my ($pct) = ($vl // '') =~ /; ([\d.]+)% of /;
    ok defined $pct && abs($pct - 100 * $in_pl / $stmts) <= 0.051, "csv: '# View:' says the share of the statement time"
        or diag $vl;
    my ($c2) = run_cmd([$nytp, 'csv', '-o', "$dir/csv2", '--hide=^Moose::', $moose]);
    is $c2, 2, 'csv --hide=RE (not file:): exit 2, lines have no call stacks';

    # calls and flame: a frame matches file:RE by its sub's file, the file
    # top gives the sub (xsubs: the main program's, as Devel::NYTProf has
    # them)
    my %file_n;
    for (keys %file_of) { (my $n = $_) =~ s/\(eval \d+\)/(eval 0)/g; $file_n{$n} //= $file_of{$_} }
    for my $v (['hide', '\.pm$'], ['focus', 'moose-sqlite\.pl$'], ['ignore', '/Moose/']) {
        my ($op, $fre) = @$v;
        my $label = "moose calls --$op='file:$fre'";
        my $e = expect($all, $op, sub { ($file_n{$_[0]} // '') =~ /$fre/ });
        my $tol = 1e-4 * $e->{total} + 2;
        ok $e->{shown} > 0 && $e->{shown} < $e->{total}, "$label: leaves something out" if $op ne 'hide';
        my ($got, $head, $cl) = paths_of($moose, "--$op=file:$fre");
        share_ok($head, $op, "file:$fre", $e, $label);
        same_subs(leaf_sums($got), $e->{excl}, $tol, "$label: exclusive ticks per sub (those of top's files)");
        my $sum = 0;
        $sum += $_->[1] for @$got;
        ok abs($sum - $e->{shown}) <= $tol, "$label: the total shown" or diag "$sum vs $e->{shown}";
        ok !(grep { grep { ($file_n{$_} // '') =~ /$fre/ } @{$_->[0]} } @$got), "$label: no frame of those files left"
            if $op eq 'hide';
        my (undef, $fl) = run_cmd([$nytp, 'flame', "--$op=file:$fre", $moose]);
        is $fl, $cl, "moose flame --$op='file:$fre': the collapsed lines of calls";
        my ($fst, $svg, $ferr) = run_cmd([$nytp, 'flame', '--svg', "--$op=file:$fre", $moose]);
        is $fst, 0, "moose flame --svg --$op='file:$fre': exit 0" or diag $ferr;
        like $svg, qr/\Q$op\E (?:'|&#39;)file:/, "moose flame --svg --$op='file:$fre': the subtitle says so";
        # the same view in top and, for hide, speedscope's time line
        my (undef, $tj) = run_cmd([$nytp, 'top', '--json', '-n', '0', "--$op=file:$fre", $moose]);
        my %te;
        for my $s (@{top_json($tj)->{subs}}) {
            (my $n = $s->{name}) =~ s/\(eval \d+\)/(eval 0)/g;
            $te{$n} += $s->{excl} * $tps;
        }
        same_subs(\%te, $e->{excl}, $tol, "moose top --$op='file:$fre': exclusive time per sub, as calls");
        next unless $op eq 'hide';
        my $ss = "$dir/file.json";
        run_cmd([$nytp, 'speedscope', "--$op=file:$fre", '-o', $ss, $moose]);
        my ($self) = evented_self($json->decode(slurp_file($ss)), '^$');
        same_subs({map { $_ => $self->{$_} / 1e9 * $tps } keys %$self}, $e->{excl}, $tol,
                  "moose speedscope --$op='file:$fre': self time per frame on the time line, as calls");
    }
}
{
    # recursion folded after hiding: a sub recursing through another
    my $f = fresh_profile('rec', <<'PL');
sub r { my $n = shift; h($n - 1) if $n > 0 }
sub h { r(@_) }
r(30);
PL
    my ($st, $out) = run_cmd([$nytp, 'calls', '--hide=^main::h$', '--max-recursion=5', $f]);
    like $out, qr/^main::r(?:;main::r){4};main::r\x{e2}\x{80}\x{a6}\[\x{c3}\x{97}26\] /m,
        'hiding the sub between two frames of a recursion folds the recursion';
    # the time line of speedscope: folded by the same layer, hidden calls
    # between two of a run not counting
    my $ss = "$dir/rec.json";
    run_cmd([$nytp, 'speedscope', '--hide=^main::h$', '--max-recursion=5', '-o', $ss, $f]);
    my $sj = decode_json(slurp_file($ss));
    is_deeply [map { $_->{type} } @{$sj->{profiles}}], ['evented'], 'speedscope --hide --max-recursion: a time line';
    my @ev = @{$sj->{profiles}[0]{events} // []};
    my @names = map { $_->{name} } @{$sj->{shared}{frames}};
    my ($max, @opened) = (0);
    for (@ev) {
        if ($_->{type} eq 'O') { push @opened, $names[$_->{frame}]; $max = @opened if @opened > $max }
        else { pop @opened }
    }
    my ($folded) = grep { /\x{2026}/ } @names;
    is $folded, "main::r\x{2026}[\x{d7}26]", 'speedscope: the folded frame, named as calls names it';
    is $max, 6, 'speedscope: 5 calls of main::r, then the folded one, drawn';
    ok !(grep { $_ eq 'main::h' } map { $names[$_->{frame}] } @ev), 'speedscope: main::h not drawn';
}
{
    my ($st, undef, $err) = run_cmd([$nytp, 'top', '--focus=(Moose', $moose]);
    is $st, 2, 'a bad regular expression: exit 2';
    like $err, qr/^nytp top: --focus: '\(Moose': /, '... naming the option and the expression';
}

# ---- sibling string evals: one name in the call tree, several subs -----

{
    # three evals of different source, each defining an anonymous sub
    # called as often as its number: the tree names them all
    # __ANON__[(eval 0)[...]]; a view that leaves them in gives each its
    # own calls and times, not all of them to one
    my $f = fresh_profile('sib', <<'PL');
my $t = 0;
for my $i (1 .. 3) {
    my $f = eval "sub { my \$s = 0; \$s += \$_ for 1 .. (500 * $i); \$s + $i }";
    $t += $f->() for 1 .. $i;
}
print "$t\n";
PL
    my %sub;
    for my $v ([], ['--hide=^NOMATCH$']) {
        my ($st, $out, $err) = run_cmd([$nytp, 'top', '-n', '0', '--json', @$v, $f]);
        is $st, 0, "sibling evals: top --json @$v: exit 0" or diag $err;
        $sub{@$v ? 'view' : 'all'} = {map { $_->{name} => $_ } grep { $_->{name} =~ /__ANON__\[\(eval/ }
                                      @{top_json($out)->{subs}}};
    }
    my @evals = sort keys %{$sub{all}};
    is scalar @evals, 3, 'sibling evals: three subs unfiltered' or diag explain \%sub;
    for my $n (@evals) {
        my ($a, $b) = ($sub{all}{$n}, $sub{view}{$n} // {calls => 0, excl => 0});
        is $b->{calls}, $a->{calls}, "sibling evals: $n keeps its calls ($a->{calls}) in the view";
        ok abs($b->{excl} - $a->{excl}) <= 0.02 * $a->{excl} + 1e-6,
            "sibling evals: $n keeps its exclusive time in the view" or diag "$b->{excl} vs $a->{excl}";
    }
}

# ---- cachegrind: a line view, file: patterns only; a command without
# the options says so ---------------------------------------------------------

{
    my $cg = "$dir/cg.out";
    my ($st, undef, $err) = run_cmd([$nytp, 'cachegrind', '-o', $cg, '--focus=file:moose-sqlite\.pl$', $moose]);
    is $st, 0, 'cachegrind --focus=file:RE: exit 0' or diag $err;
    my $out = slurp_file($cg) // '';
    my @fl = $out =~ /^fl=(?:\(\d+\) )?(.+)$/mg;
    ok @fl && !(grep { !/moose-sqlite\.pl$/ } @fl), 'cachegrind --focus=file:RE: only that file' or diag "@fl";
    my ($csvline) = (slurp_file((glob "$dir/csv/*.csv")[0] // '') // '') =~ /; ([\d.]+)% of /;
    my ($cgpct) = $out =~ /^desc: View: .*: ([\d.]+)% of the statement ticks shown/m;
    ok defined $cgpct && defined $csvline && abs($cgpct - $csvline) <= 0.15,
        "cachegrind: 'desc: View:' says the share of the statement time (as csv's)" or diag "$cgpct $csvline";
    ($st) = run_cmd([$nytp, 'cachegrind', '-o', $cg, '--hide=^Moose::', $moose]);
    is $st, 2, 'cachegrind --hide=RE (not file:): exit 2';
    my ($dst, undef, $derr) = run_cmd([$nytp, 'dump', '--hide=^Moose::', $moose]);
    is $dst, 2, 'dump --hide: exit 2';
    like $derr, qr/does not filter call stacks/, 'dump --hide: says it does not filter';
}

# ---- every report's --help and manual name the options ---------------------

for my $c (qw(top calls flame html diff pprof speedscope csv cachegrind)) {
    my (undef, $help) = run_cmd([$nytp, $c, '--help']);
    my $man = slurp_file(repo() . "/man/nytp-$c.1") // '';
    for my $o (qw(focus ignore hide)) {
        like $help, qr/--\Q$o\E=/, "$c --help names --$o";
        like $man, qr/\\-\\-\Q$o\E=/, "nytp-$c(1) names --$o";
    }
}

done_testing;
