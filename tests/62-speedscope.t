#!/usr/bin/perl
# 'nytp speedscope' read by its real consumer: the file validates against
# the schema the npm package speedscope ships, and speedscope itself, loaded
# from its installed files in headless Chromium (no network), opens it
# without errors; its own export of what it read has the same total and the
# same self time per function as 'nytp calls' (evented profiles, one per
# process, from the call events) or as Devel::NYTProf::Data (the sampled
# profile of a profile without call events).  Our file's events nest and
# run forward in time; names with quotes, control bytes, Latin-1 and UTF-8
# come out as the same text.  npm packages: make deps (tests/node_modules).
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;
use JSON::PP;
use Encode ();

my $nytp = nytp();
my $td = testdata();
my $dir = scratch_dir();
my $modules = repo() . '/tests/node_modules';
my $check = "$FindBin::Bin/lib/speedscope-check.js";
my $node = (grep { -x } map { "$_/node" } split /:/, $ENV{PATH})[0];
my $chromium = (grep { -x } map { "$_/chromium" } split /:/, $ENV{PATH})[0];

need($node,
    'node is not installed (make deps)');
need(-f "$modules/speedscope/dist/release/file-format-schema.json"
    && -d "$modules/ajv" && -d "$modules/playwright-core",
    "the npm test packages are not in $modules (make deps installs them)");
need($chromium,
    'chromium is not installed (make deps)');

# ---- helpers ---------------------------------------------------------------

sub as_text {
    my $b = shift;
    my $copy = $b;
    return $copy if utf8::decode($copy) && $copy =~ /[^\x00-\x7f]/;
    return Encode::decode('latin1', $b);
}

sub ticks_per_sec {
    my $file = shift;
    my ($st, $out) = run_cmd([$nytp, 'dump', '--data', $file]);
    return $out =~ /^attribute\tticks_per_sec\t(\d+)$/m ? $1 : die "no ticks_per_sec in $file";
}

# frames of nytp calls decoded: ';', LF, CR and '%' in names are written
# %3B, %0A, %0D, %25
sub unescape_frame { my $f = shift; $f =~ s/%([0-9A-F]{2})/chr hex $1/ge; return $f }

sub calls_of {
    my ($files) = @_;
    my ($st, $out, $err) = run_cmd([$nytp, 'calls', @$files]);
    die "nytp calls failed: $err" if $st;
    my (%flat, $total);
    for (split /\n/, $out) {
        my ($p, $v) = /^(.*) (-?\d+)$/ or die "bad line $_";
        $flat{as_text(unescape_frame((split /;/, $p)[-1]))} += $v;
        $total += $v;
    }
    return {flat => \%flat, total => $total // 0};
}

# Self time per frame name and the total of a speedscope file's profiles,
# checking that evented events nest and never go back in time.
sub self_times {
    my ($file_data, $label) = @_;
    my $frames = $file_data->{shared}{frames};
    my (%self, $total, @problems);
    for my $p (@{ $file_data->{profiles} }) {
        $total += $p->{endValue} - $p->{startValue};
        if ($p->{type} eq 'sampled') {
            for my $i (0 .. $#{ $p->{samples} }) {
                my $s = $p->{samples}[$i];
                $self{ $frames->[ $s->[-1] ]{name} } += $p->{weights}[$i] if @$s;
            }
            next;
        }
        push @problems, speedscope_events($p, undef, sub { $self{ $frames->[ $_[0] ]{name} } += $_[1] });
    }
    return (\%self, $total, \@problems);
}

sub nonzero { my $h = shift; return {map { $_ => $h->{$_} } grep { abs($h->{$_}) > 1e-6 } keys %$h} }

sub close_enough {
    my ($got, $want, $tol) = @_;
    my @bad;
    for my $k (sort keys %{ {%$got, %$want} }) {
        my ($g, $w) = ($got->{$k} // 0, $want->{$k} // 0);
        push @bad, "$k: got $g, want $w" if abs($g - $w) > $tol;
    }
    return \@bad;
}

sub in_speedscope {
    my ($file) = @_;
    local $ENV{CHROMIUM} = $chromium;
    my ($st, $out, $err) = run_cmd(['timeout', '180', $node, $check, $file, $dir]);
    my $r = eval { decode_json($out) };
    return $r // {fatal => "exit $st: $err $out"};
}

# ---- evented profiles against nytp calls --------------------------------------

my @cases = (
    [['demo.out'], 'demo', 1],
    [['recursion.out'], 'recursion', 1],
    [['tricky-strings.out'], 'tricky strings', 1],
    [['utf8-names.out'], 'UTF-8 and Latin-1 names', 1],
    [['demo.out', 'recursion.out'], 'two inputs', 2],
);
for my $c (@cases) {
    my ($names, $label, $nprofiles) = @$c;
    my @files = map { "$td/$_" } @$names;
    my $json = "$dir/t.speedscope.json";
    unlink $json;
    my ($st, $out, $err) = run_cmd([$nytp, 'speedscope', '-o', $json, @files]);
    is $st, 0, "$label: nytp speedscope exits 0" or diag $err;
    is $err, '', "$label: nothing on stderr";
    my $bytes = slurp_file($json) // '';
    ok eval { my $copy = $bytes; Encode::decode("UTF-8", $copy, Encode::FB_CROAK); 1 }, "$label: the file is UTF-8";
    my $data = eval { JSON::PP->new->utf8->decode($bytes) };
    ok $data, "$label: the file is JSON" or next;
    is scalar(@{ $data->{profiles} }), $nprofiles, "$label: one evented profile per process";
    is_deeply [map { $_->{type} } @{ $data->{profiles} }], [('evented') x $nprofiles], "$label: evented";
    my $k = 1e9 / ticks_per_sec($files[0]);
    my $calls = calls_of(\@files);
    my ($self, $total, $problems) = self_times($data, $label);
    is_deeply $problems, [], "$label: events nest and run forward in time";
    ok abs($total - $calls->{total} * $k) < 1e-3, "$label: total = nytp calls total"
        or diag "$total vs " . $calls->{total} * $k;
    is_deeply close_enough(nonzero($self), {map { $_ => $calls->{flat}{$_} * $k } keys %{ $calls->{flat} }}, 1e-3), [],
        "$label: self time per function = nytp calls per leaf sub";
    my %names = map { $_->{name} => 1 } @{ $data->{shared}{frames} };
    ok !(grep { !$names{$_} } keys %{ $calls->{flat} }), "$label: every sub name comes out as the same text";

    my $r = in_speedscope($json);
    is $r->{fatal}, undef, "$label: speedscope ran" or next;
    is_deeply $r->{schemaErrors}, [], "$label: valid against speedscope's file-format-schema.json";
    is_deeply [$r->{consoleErrors}, $r->{pageErrors}], [[], []], "$label: speedscope opens it without errors";
    is_deeply $r->{requests}, [], "$label: no network";
    like $r->{title}, qr/\Q$data->{profiles}[0]{name}\E/, "$label: speedscope shows the profile's name";
    my ($sself, $stotal, $sproblems) = self_times($r->{exported}, "$label (speedscope)");
    is_deeply $sproblems, [], "$label: speedscope's export is consistent";
    ok abs($stotal - $total) < 1e-3, "$label: speedscope has the same total" or diag "$stotal vs $total";
    is_deeply close_enough(nonzero($sself), nonzero($self), 1e-3), [], "$label: speedscope has the same self time per function";
    my ($hot) = sort { $self->{$b} <=> $self->{$a} || $a cmp $b } keys %$self;
    like Encode::decode('UTF-8', Encode::encode('UTF-8', $r->{sandwich})), qr/\Q$hot\E/, "$label: the sandwich view lists the hottest sub ($hot)";
}

# ---- --sampled: the call paths of nytp calls, weighted (issue 21) ------------------------

for my $c (@cases) {
    my ($names, $label) = @$c;
    my @files = map { "$td/$_" } @$names;
    my $json = "$dir/s.speedscope.json";
    unlink $json;
    my ($st, $out, $err) = run_cmd([$nytp, 'speedscope', '--sampled', '-o', $json, @files]);
    is $st, 0, "$label --sampled: exit 0" or diag $err;
    is $err, '', "$label --sampled: nothing on stderr";
    my $data = eval { JSON::PP->new->utf8->decode(slurp_file($json)) };
    ok $data, "$label --sampled: JSON" or next;
    is_deeply [map { $_->{type} } @{ $data->{profiles} }], ['sampled'], "$label --sampled: one sampled profile";
    my $k = 1e9 / ticks_per_sec($files[0]);
    my $calls = calls_of(\@files);
    my ($self, $total) = self_times($data);
    ok abs($total - $calls->{total} * $k) < 1e-3, "$label --sampled: total = nytp calls total"
        or diag "$total vs " . $calls->{total} * $k;
    is_deeply close_enough(nonzero($self), {map { $_ => $calls->{flat}{$_} * $k } keys %{ $calls->{flat} }}, 1e-3), [],
        "$label --sampled: self time per function = nytp calls per leaf sub";
    my (undef, $lines) = run_cmd([$nytp, 'calls', @files]);
    my $nonzero = grep { !/ 0$/ } split /\n/, $lines;
    is scalar(@{ $data->{profiles}[0]{samples} }), $nonzero, "$label --sampled: a sample per path of nytp calls with time";
    next unless $label eq 'demo';
    run_cmd([$nytp, 'speedscope', '-o', "$dir/e.json", @files]);
    cmp_ok -s $json, '<', (-s "$dir/e.json") / 5, "$label --sampled: a fifth of the evented file or less";
    my $r = in_speedscope($json);
    is $r->{fatal}, undef, "$label --sampled: speedscope ran" or next;
    is_deeply $r->{schemaErrors}, [], "$label --sampled: valid against the schema";
    is_deeply [$r->{consoleErrors}, $r->{pageErrors}], [[], []], "$label --sampled: speedscope opens it without errors";
    my ($sself, $stotal) = self_times($r->{exported});
    ok abs($stotal - $total) < 1e-3, "$label --sampled: speedscope has the same total";
    is_deeply close_enough(nonzero($sself), nonzero($self), 1e-3), [], "$label --sampled: and the same self times";
}

# ---- processes: a merged profile of a program that forked ------------------------

{
    my $merged = "$dir/fork-merged.out";
    run_cmd([$nytp, 'merge', '-o', $merged, "$td/fork.out", "$td/fork-child.out"]);
    my $json = "$dir/fork.json";
    my ($st, $out, $err) = run_cmd([$nytp, 'speedscope', '-o', $json, $merged]);
    is $st, 0, 'merged fork profile: exit 0' or diag $err;
    my $data = decode_json(slurp_file($json));
    my @pids = map { $_->{name} =~ /\(pid (\d+)\)$/ ? $1 : 'none' } @{ $data->{profiles} };
    is scalar(@pids), 2, 'merged fork profile: one evented profile per process';
    isnt $pids[0], $pids[1], 'merged fork profile: two processes, named by pid';
    my $k = 1e9 / ticks_per_sec($merged);
    my $calls = calls_of([$merged]);
    my ($self, $total, $problems) = self_times($data);
    is_deeply $problems, [], 'merged fork profile: events nest and run forward';
    ok abs($total - $calls->{total} * $k) < 1e-3, 'merged fork profile: total = nytp calls total';
    # a write error while the first of two processes is written (more
    # than fits a buffer: 30,000 calls) is the output's, not the input's
    my $many = fresh_profile('many-calls', "sub f { 1 } f() for 1 .. 30000;\n", '');
    my $two = "$dir/two-processes.out";
    run_cmd([$nytp, 'merge', '-o', $two, $many, "$td/fork.out"]);
    ($st, $out, $err) = run_cmd(['sh', '-c', 'exec "$@" > /dev/full', 'sh', $nytp, 'speedscope', '-o', '-', $two]);
    is $st, 1, 'full disk: exit 1';
    like $err, qr/^nytp speedscope: \(standard output\): write failed: No space left on device\n\z/,
        'full disk: one line naming the output';
}

# ---- time order: calls laid out where they ran ----------------------------------

{
    my $json = "$dir/demo.speedscope.json";
    run_cmd([$nytp, 'speedscope', '-o', $json, "$td/demo.out"]);
    my $data = decode_json(slurp_file($json));
    my $f = $data->{shared}{frames};
    my ($fib) = grep { $f->[$_]{name} eq 'main::fib' } 0 .. $#$f;
    is $f->[$fib]{line}, 21, 'frames have their line';
    like $f->[$fib]{file}, qr/demo\.pl$/, 'frames have their file';
    # fib(12) makes 465 calls, each of its own
    my $opens = grep { $_->{type} eq 'O' && $_->{frame} == $fib } @{ $data->{profiles}[0]{events} };
    my ($st, $cc) = run_cmd([$nytp, 'calls', '--calls', "$td/demo.out"]);
    my $n = 0;
    $n += $_ for $cc =~ /(?:^|;)main::fib (\d+)$/mg;
    is $opens, $n, 'one open event per call (as many as nytp calls --calls counts)';
}

# ---- without call events: a sampled profile ----------------------------------------

{
    my $prof = fresh_profile('nocalls', <<'PERL', 'calls=0');
sub inner { my $x = 0; $x += $_ for 1 .. 2000; return $x }
sub outer { my $t = 0; $t += inner() for 1 .. 20; return $t }
outer() for 1 .. 5;
PERL
    my $json = "$dir/nocalls.json";
    my ($st, $out, $err) = run_cmd([$nytp, 'speedscope', '-o', $json, $prof]);
    is $st, 0, 'calls=0: exit 0';
    like $err, qr/no sub return events .*sampled profile .*call-site data\n\z/, 'calls=0: says so on stderr';
    my $data = decode_json(slurp_file($json));
    is $data->{profiles}[0]{type}, 'sampled', 'calls=0: a sampled profile';
    my ($ost, $oracle) = run_cmd([$^X, '-MDevel::NYTProf::Data', '-e', <<'PERL', $prof]);
my $p = Devel::NYTProf::Data->new({filename => shift, quiet => 1});
for my $si (values %{ $p->subname_subinfo_map }) {
    printf "%s\t%.6f\n", $si->subname, $si->excl_time * 1e9 if $si->calls;
}
PERL
    my %excl = map { split /\t/ } split /\n/, $oracle;
    my ($self, $total) = self_times($data);
    is_deeply close_enough(nonzero($self), nonzero(\%excl), 1), [], 'calls=0: weights = Devel::NYTProf::Data excl_time per sub';
    my $r = in_speedscope($json);
    is_deeply $r->{schemaErrors}, [], 'calls=0: valid against the schema';
    is_deeply [$r->{fatal}, $r->{consoleErrors}, $r->{pageErrors}], [undef, [], []], 'calls=0: speedscope opens it without errors';
    my ($sself, $stotal) = self_times($r->{exported} // {profiles => [], shared => {frames => []}});
    ok abs($stotal - $total) < 1e-3, 'calls=0: speedscope has the same total' or diag "$stotal vs $total";
}

# ---- outputs and errors ---------------------------------------------------------------

{
    my $cwd = "$dir/cwd";
    mkdir $cwd;
    my ($st, $out, $err) = run_cmd([$nytp, 'speedscope', "$td/demo.out"], cwd => $cwd);
    is $st, 0, 'default output: exit 0';
    ok -s "$cwd/nytprof.speedscope.json", 'default output is nytprof.speedscope.json';
    ($st, $out, $err) = run_cmd([$nytp, 'speedscope', '-o', '-', '-'], stdin => slurp_file("$td/demo.out"));
    is $st, 0, 'standard input to standard output: exit 0';
    is $out, slurp_file("$cwd/nytprof.speedscope.json"), 'the same bytes as the file';

    ($st, $out, $err) = run_cmd([$nytp, 'speedscope', '-o', "$dir/x.json", "$dir/missing.out"]);
    is $st, 1, 'missing input: exit 1';
    is scalar(() = $err =~ /\n/g), 1, 'missing input: one line';
    ok !-e "$dir/x.json", 'missing input: no output file';

    ($st, $out, $err) = run_cmd([$nytp, 'speedscope', '-o', "$dir/x.json", "$td/broken/bad-tag.out"]);
    is $st, 1, 'corrupt input: exit 1';
    like $err, qr/offset \d+/, 'corrupt input: says where';
    ok !-e "$dir/x.json", 'corrupt input: no output file';

    my $trunc = "$td/broken/trunc-z-middle.out";
    ($st, $out, $err) = run_cmd([$nytp, 'speedscope', '-o', "$dir/t.json", $trunc]);
    is $st, 0, 'truncated input: exit 0';
    like $err, qr/truncated/, 'truncated input: warns';
    ok eval { decode_json(slurp_file("$dir/t.json")) }, 'truncated input: the file is JSON';
    ($st, $out, $err) = run_cmd([$nytp, 'speedscope', '--strict', '-o', "$dir/s.json", $trunc]);
    is $st, 1, 'truncated input with --strict: exit 1';
    ok !-e "$dir/s.json", '--strict: no output file';

    ($st, $out, $err) = run_cmd([$nytp, 'speedscope', '--frob']);
    is $st, 2, 'unknown option: exit 2';
}

done_testing;
