package NytpTest;
# Helpers shared by the integration tests: where things are, running a
# command and capturing its output, making fresh profiles.
use strict;
use warnings;
use Exporter 'import';
use File::Spec;
use File::Temp qw(tempdir);
use Cwd qw(abs_path);
use Encode ();
use FindBin;

our @EXPORT = qw(repo nytp run_cmd slurp_file fresh_profile gen testdata scratch_dir scratch_script
                 nytp_profile need missing xml_problem run_ok decode_ok speedscope_events);

# The tests send HUP, INT and QUIT to programs they start and expect them
# to act on them.  Started from `nohup`, or as a background job of a shell
# without job control (`make test &`, a CI runner), the harness has those
# signals ignored, and every program it starts inherits that: the profiler
# rightly keeps an ignored signal ignored, so such a test waited for ever.
# They are put back to their defaults here, for every test; a test that is
# about an ignored signal ignores it itself.
BEGIN { $SIG{$_} = 'DEFAULT' for qw(HUP INT QUIT) }

# need(HAVE, WHY): a test file whose tools are missing (make deps installs
# them) is skipped when run by hand, but fails under 'make test', which sets
# NYTP_TEST_ALL=1 after installing them: a missing consumer is never a pass.
sub need {
    my ($have, $why) = @_;
    return if $have;
    if ($ENV{NYTP_TEST_ALL}) {
        Test::More::plan(tests => 1);
        Test::More::fail("required for make test: $why");
        exit 1;
    }
    Test::More::plan(skip_all => $why);
}

# missing(HAVE, WHY): for a SKIP block inside a test file,
#     skip WHY, N if missing(HAVE, WHY);
# false when HAVE is true; otherwise true, after a failed test under
# 'make test' (NYTP_TEST_ALL=1), where make deps has installed the tool and
# its absence is a fault, not a reason to skip.
sub missing {
    my ($have, $why) = @_;
    return 0 if $have;
    Test::More::fail("required for make test: $why") if $ENV{NYTP_TEST_ALL};
    return 1;
}

# run_ok([ARGS], LABEL, status => N, ...): nytp with ARGS (the options of
# run_cmd after), a test that it exits N (default 0), its stderr shown
# when not; (stdout, stderr), or stdout in scalar context.
sub run_ok {
    my ($args, $label, %opt) = @_;
    my ($st, $out, $err) = run_cmd([nytp(), @$args], %opt);
    my $want = $opt{status} // 0;
    Test::More::is($st, $want, "$label: exit $want") or Test::More::diag($err);
    return wantarray ? ($out, $err) : $out;
}

# decode_ok(TEXT, LABEL): TEXT decoded as UTF-8 JSON, a test that it is
# valid JSON; {} when it is not.
sub decode_ok {
    my ($text, $label) = @_;
    require JSON::PP;
    my $d = eval { JSON::PP->new->utf8->decode($text) };
    Test::More::ok($d, "$label: valid JSON") or Test::More::diag($@);
    return $d // {};
}

sub repo { return abs_path("$FindBin::Bin/..") }
sub nytp { return repo() . '/build/nytp' }
sub testdata { return repo() . '/testdata' }

my $scratch;
sub scratch_dir { $scratch //= tempdir('nytp-test-XXXXXX', TMPDIR => 1, CLEANUP => 1) }

# scratch_script($name, $perl_source) -> the path of a new file holding
# the source, in the scratch directory
sub scratch_script {
    my ($name, $code) = @_;
    my $path = scratch_dir() . "/$name";
    open my $fh, '>', $path or die "$path: $!";
    print $fh $code;
    close $fh or die "$path: $!";
    return $path;
}

# nytp_profile($name, $script, $nytprof_options, @args) -> ($exit_status,
# $stdout, $stderr, $file): the script run under Devel::NYTP of this build
# in the scratch directory, writing $file there ($name.out; files of an
# earlier run of that name removed first)
sub nytp_profile {
    my ($name, $script, $opts, @args) = @_;
    my $dir = scratch_dir();
    my $file = "$dir/$name.out";
    unlink glob "$file*";
    local $ENV{NYTPROF} = join ':', grep { length } $opts, "file=$file";
    my @run = ($^X, '-I' . repo() . '/build/perl', '-d:NYTP', $script, @args);
    return (run_cmd(\@run, cwd => $dir), $file);
}

# run_cmd(\@argv, stdin => $bytes) -> ($exit_status, $stdout, $stderr)
sub run_cmd {
    my ($argv, %opt) = @_;
    my $dir = scratch_dir();
    my ($in, $out, $err) = map { "$dir/run.$_" } qw(in out err);
    open my $fh, '>:raw', $in or die "$in: $!";
    print $fh $opt{stdin} // '';
    close $fh;
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        open STDIN, '<', $in or die;
        open STDOUT, '>', $out or die;
        open STDERR, '>', $err or die;
        chdir $opt{cwd} if $opt{cwd};
        exec @$argv or die "exec $argv->[0]: $!";
    }
    waitpid $pid, 0;
    my $status = $? & 127 ? 128 + ($? & 127) : $? >> 8;
    return ($status, slurp_file($out), slurp_file($err));
}

# gen($kind, $n) -> the path of a profile that build/gen-profile made
# (tests/gen-profile.c lists the kinds), in the scratch directory
sub gen {
    my ($kind, $n) = @_;
    my $f = scratch_dir() . "/$kind-$n.out";
    system(repo() . '/build/gen-profile', $kind, $n, $f) == 0 or die "gen-profile $kind $n failed";
    return $f;
}

sub slurp_file {
    my $f = shift;
    open my $fh, '<:raw', $f or return undef;
    local $/;
    my $d = <$fh>;
    return $d // '';
}

# fresh_profile($name, $perl_source_or_file, $nytprof_options) -> path of a
# profile written now by Devel::NYTProf, in the scratch directory.
sub fresh_profile {
    my ($name, $source, $opts) = @_;
    my $dir = scratch_dir();
    my $script = $source;
    if ($source =~ /\n/) {
        $script = "$dir/$name.pl";
        open my $fh, '>:raw', $script or die;
        print $fh $source;
        close $fh;
    }
    my $file = "$dir/$name.out";
    unlink $file;
    local $ENV{NYTPROF} = join ':', grep { length } ($opts // ''), "file=$file";
    my ($st, $out, $err) = run_cmd([$^X, '-d:NYTProf', $script], cwd => $dir);
    die "profiling $name failed ($st): $err" if $st != 0 || !-s $file;
    return $file;
}

# speedscope_events(PROFILE, OPEN, CLOSE): walk one evented profile of a
# speedscope file (decoded JSON): OPEN->(FRAME) at each open event,
# CLOSE->(FRAME, SELF) at each close with the frame's self time (its
# time less its children's).  Returns what is wrong with the events: one
# back in time, a close that does not match the open frame, frames left
# open, an event after endValue.
sub speedscope_events {
    my ($p, $open, $close) = @_;
    my (@stack, @problems);    # stack: [frame, open at, time in children]
    my $last = $p->{startValue};
    for my $e (@{ $p->{events} }) {
        push @problems, "event at $e->{at} before $last" if $e->{at} < $last;
        $last = $e->{at};
        if ($e->{type} eq 'O') {
            push @stack, [$e->{frame}, $e->{at}, 0];
            $open->($e->{frame}) if $open;
            next;
        }
        my $top = pop @stack;
        if (!$top || $top->[0] != $e->{frame}) {
            push @problems, "close of frame $e->{frame} does not match the open one";
            last;
        }
        my $dur = $e->{at} - $top->[1];
        $stack[-1][2] += $dur if @stack;
        $close->($top->[0], $dur - $top->[2]) if $close;
    }
    push @problems, scalar(@stack) . ' frames left open' if @stack;
    push @problems, "last event at $last after endValue $p->{endValue}" if $last > $p->{endValue};
    return @problems;
}

# xml_problem(BYTES): undef when BYTES are well-formed XML, else what is
# wrong. A careful well-formedness check of XML: UTF-8 with XML characters only,
# properly nested and quoted tags, known entities, one root.
sub xml_problem {
    my ($bytes) = @_;
    my $s = eval { Encode::decode('UTF-8', $bytes, Encode::FB_CROAK()) };
    return "not UTF-8" unless defined $s;
    return sprintf("character U+%04X is not allowed in XML", ord $1)
        if $s =~ /([^\x09\x0A\x0D\x20-\x{D7FF}\x{E000}-\x{FFFD}\x{10000}-\x{10FFFF}])/;
    my $ref = qr/&(?:amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);/;
    my $name = qr/[A-Za-z_:][-A-Za-z0-9_:.]*/;
    my (@stack, $roots);
    pos($s) = 0;
    $s =~ /\G<\?xml[^?]*\?>/gc;
    while (pos($s) < length $s) {
        if ($s =~ /\G<!--.*?-->/gcs || $s =~ /\G<!DOCTYPE[^>]*>/gc) {
            next;
        } elsif ($s =~ /\G<!\[CDATA\[.*?\]\]>/gcs) {
            return "CDATA outside an element" unless @stack;
        } elsif ($s =~ /\G<\/($name)\s*>/gc) {
            my $want = pop @stack;
            return "</$1> closes <" . ($want // 'nothing') . ">" if !defined $want || $want ne $1;
        } elsif ($s =~ /\G<($name)((?:\s+$name\s*=\s*(?:"[^"<]*"|'[^'<]*'))*)\s*(\/?)>/gc) {
            my ($tag, $attrs, $empty) = ($1, $2, $3);
            my %seen;
            while ($attrs =~ /($name)\s*=\s*(?:"([^"]*)"|'([^']*)')/g) {
                return "attribute $1 twice in <$tag>" if $seen{$1}++;
                my $v = $2 // $3;
                (my $rest = $v) =~ s/$ref//g;
                return "bare & in attribute $1 of <$tag>" if $rest =~ /&/;
            }
            return "a second root element <$tag>" if !@stack && $roots++;
            push @stack, $tag unless $empty;
        } elsif ($s =~ /\G([^<]+)/gc) {
            my $t = $1;
            return "text outside the root" if !@stack && $t =~ /\S/;
            (my $rest = $t) =~ s/$ref//g;
            return "bare & in text" if $rest =~ /&/;
            return "]]> in text" if $t =~ /\]\]>/;
        } else {
            return "bad markup at character " . pos($s) . ": " . substr($s, pos($s), 40);
        }
    }
    return "unclosed <$stack[-1]>" if @stack;
    return "no root element" unless $roots;
    return undef;
}

1;
