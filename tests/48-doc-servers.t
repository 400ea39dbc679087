#!/usr/bin/perl
# The server examples of the documentation, run as written (issue 35,
# item 15): nytp-run(1) SERVERS and the Plack::Middleware::NYTP POD.
# 'nytp run -- starman ...', exactly as they show it, failed with "Can't
# open perl script "starman"": a SCRIPT that is not a file here and has
# no '/' is now looked up in PATH, as perl -S does.
#
# Each example block is read from the page itself and run by bash, with
# only these changes: port 5000 becomes a free port of 127.0.0.1,
# /var/tmp and /srv/app a scratch directory, 'wrk -d 30s' one second,
# 4 workers 2; 'nytp run' gets '-I build/perl' where a .psgi enables the
# middleware (the page says to add it in a build tree), and a plain perl
# PERL5LIB=build/perl (as after 'make install'); after a server started
# with '&', bash waits until it has answered a request (with the
# middleware, until it takes a connection: a request would be the one a
# worker's 'every => N' profiles).  A server stopped while its master
# still compiles may die of perl's 'panic: fold_constants JMPENV_PUSH
# returned 2' (its TERM handler exits from constant folding; seen once
# under sample=100), and its workers then run on.  The application is a small one
# with a sub of its own (work); in the middleware examples it is the
# builder of the page's comment or code.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;
use NytpServer qw(free_port);

need(-x '/usr/bin/starman', 'starman (Debian package starman)');
need(scalar(grep { -x "$_/wrk" } split /:/, $ENV{PATH}), 'wrk (Debian package wrk)');
need(scalar(grep { -x "$_/curl" } split /:/, $ENV{PATH}), 'curl (Debian package curl)');
delete $ENV{NYTPROF};
delete @ENV{qw(PERL5LIB PERL5OPT)};

my $repo = repo();
my $nytp = nytp();
my $inc = "$repo/build/perl";
my $dir = scratch_dir();

# the example blocks of a man page (.EX ... .EE), groff escapes undone
sub man_blocks {
    my ($file) = @_;
    my $t = slurp_file($file) // die "$file";
    my @blocks = $t =~ /^\.EX\n(.*?)^\.EE$/msg;
    for (@blocks) {
        s/\\\(aq/'/g;
        s/\\-/-/g;
        s/\\e/\\/g;
    }
    return @blocks;
}

# the verbatim paragraphs of a section of a POD
sub pod_blocks {
    my ($file, $section) = @_;
    my $t = slurp_file($file) // die "$file";
    my ($body) = $t =~ /^=head1 \Q$section\E\n(.*?)^=head1 /ms or die "$file: no $section";
    my @blocks;
    $body =~ s/\A\n+//;
    for my $para (split /\n\n+/, $body) {
        next unless $para =~ /\A[ \t]/;
        $para =~ s/^  //mg;
        push @blocks, "$para\n";
    }
    return join "\n", @blocks;
}

my $app_code = <<'PERL';
sub work { my $s = 0; $s += $_ * $_ for 1 .. 2000; $s }
my $app = sub { return [200, ['Content-Type' => 'text/plain'], ['sum=' . work() . "\n"]] };
PERL

sub write_file {
    my ($path, $text) = @_;
    open my $fh, '>', $path or die "$path: $!";
    print $fh $text;
    close $fh;
}

# Run a documented block in its own directory; returns (status, stdout,
# stderr, the directory).
sub run_block {
    my ($name, $block, %o) = @_;
    my $d = "$dir/$name";
    mkdir $d;
    mkdir "$d/var-tmp";
    mkdir "$d/srv";
    mkdir "$d/srv/app";
    my $port = free_port();
    my $psgi = $o{builder}
        ? "use Plack::Builder;\n$app_code$o{builder}\n"
        : "$app_code\$app;\n";
    write_file("$d/app.psgi", $psgi);
    write_file("$d/srv/app/app.psgi", $psgi);
    my $sh = $block;
    $sh =~ s/\\\n\s*/ /g;              # continued lines
    $sh =~ s/(?:127\.0\.0\.1)?:5000\b/127.0.0.1:$port/g;
    $sh =~ s{/var/tmp\b}{$d/var-tmp}g;
    $sh =~ s{/srv/app\b}{$d/srv/app}g;
    $sh =~ s{/usr/local/bin/nytp\b}{$nytp}g;
    $sh =~ s/\bwrk -d 30s\b/wrk -d 1s/g;
    $sh =~ s/--workers 4\b/--workers 2/g;
    $sh =~ s/^nytp run /nytp run -I $inc /mg if $o{builder};
    my @lines;
    for my $line (split /\n/, $sh) {
        next if $line =~ /^\s*(?:#|\[|KillMode)/ || $line !~ /\S/;
        $line =~ s/^ExecStart=//;
        my $bg = $line =~ s/\s*&\s*(?:#.*)?$//;
        $line =~ s/^(\S+=\S+ )+/PERL5LIB=$inc $&/ if $line =~ /PERL5OPT=/;
        if ($bg || $o{background}) {
            push @lines, "$line &", 'server=$!', "wait_ready $port || exit 97";
        } else {
            push @lines, $line;
        }
    }
    push @lines, @{ $o{after} || [] };
    my $script = join "\n", 'set -e',
        ($o{builder}
            ? 'wait_ready() { for i in $(seq 600); do (exec 3<>/dev/tcp/127.0.0.1/$1) 2>/dev/null && return 0; kill -0 $server || return 1; sleep 0.1; done; return 1; }'
            : 'wait_ready() { for i in $(seq 600); do curl -s -o /dev/null http://127.0.0.1:$1/ && return 0; kill -0 $server || return 1; sleep 0.1; done; return 1; }'),
        "trap 'st=\$?; kill -TERM \$server 2>/dev/null || true; wait || true; exit \$st' EXIT",
        @lines, '';
    write_file("$d/example.sh", $script);
    local $ENV{PATH} = "$repo/build:$ENV{PATH}";
    my ($st, $out, $err) = run_cmd(['timeout', '-k', '5', '150', 'bash', "$d/example.sh"], cwd => $d);
    return ($st, $out, $err, $d);
}

sub complete {
    my ($file) = @_;
    my ($st) = run_cmd([$nytp, 'dump', '--strict', $file]);
    return $st == 0;
}

# nytp-run(1) SERVERS
my @servers = man_blocks("$repo/man/nytp-run.1");
my ($load) = grep { /^nytp run -o st\.out -- starman/m } @servers;
ok $load, 'nytp-run(1): the example of a Starman server under load';
{
    my ($st, $out, $err, $d) = run_block('load', $load);
    is $st, 0, 'SERVERS: starman under load, stopped, reported: every command succeeds' or diag $err;
    like $err, qr/^nytp run: profile written to st\.out\b/m, '... names the master\'s profile';
    ok complete("$d/st.out"), '... complete';
    my @workers = grep { complete($_) } glob("$d/st.out.*");
    ok @workers >= 2, '... and a complete profile per worker (' . scalar(@workers) . ')';
    like $out, qr/::work\b/, '... nytp top shows the application\'s sub';
    ok -f "$d/st-report/index.html", '... and nytp html wrote its report';
}
my ($mw) = grep { /enable 'NYTP'/ } @servers;
ok $mw, 'nytp-run(1): the example with Plack::Middleware::NYTP';
{
    my ($builder) = $mw =~ /^# app\.psgi:\s*(builder \{.*\})\s*$/m;
    $builder =~ s{/var/tmp\b}{$dir/mw/var-tmp}g;
    my ($st, $out, $err, $d) = run_block('mw', $mw, builder => $builder);
    is $st, 0, 'SERVERS: the middleware example: every command succeeds' or diag $err;
    my @req = glob("$d/var-tmp/nytp/GET-api_users-*.nytprof.out");
    is scalar(@req), 1, '... one profile for the one request';
    ok @req && complete($req[0]), '... complete';
    like $err, qr/^nytp run: profile written to \Q$req[0]\E \(complete\)$/m,
        '... nytp run names it (issue 35, item 18)';
    unlike $err, qr/no profile was written/, '... and does not say that none was written';
    like $out, qr/::work\b/, '... nytp top shows the application\'s sub';
}
my ($unit) = grep { /^ExecStart=/m } @servers;
ok $unit, 'nytp-run(1): the systemd unit';
{
    # KillMode=mixed: TERM to the main process only (its exit status is
    # not checked: Net::Server's master died of SIGINT in 1 of 5 runs;
    # its server_close puts INT back to its default and, run in a child,
    # sends the parent INT)
    my ($st, $out, $err, $d) = run_block('unit', $unit, background => 1,
        after => ['kill -TERM $server; wait']);
    is $st, 0, 'SERVERS: the systemd unit\'s command runs, and stops with TERM' or diag $err;
    ok complete("$d/var-tmp/app.out"), '... its profile is complete';
}

# Plack::Middleware::NYTP: SYNOPSIS and EXAMPLE: STARMAN
my $pod = "$repo/profiler/Plack/Middleware/NYTP.pm";
{
    my $syn = pod_blocks($pod, 'SYNOPSIS');
    my ($builder) = $syn =~ /^(builder \{.*?^\};)/ms or die;
    my ($either, $or) = grep { /starman/ } split /\n/, $syn;
    my @rest = grep { !/starman/ && /^(?:curl|ls|nytp top)/ } split /\n/, $syn;
    my @mkdir = grep { /^mkdir / } split /\n/, $syn;
    ok $either && $or && @rest == 3 && @mkdir == 1,
        'Plack::Middleware::NYTP SYNOPSIS: mkdir, two ways to start, then curl, ls, nytp top';
    for my $start ($either, $or) {
        my $how = $start =~ /^nytp run/ ? 'nytp-run' : 'PERL5OPT';
        my $block = join "\n", @mkdir, $start, @rest;
        (my $b = $builder) =~ s{/var/tmp\b}{$dir/syn-$how/var-tmp}g;
        $b =~ s/\bmy \$app = sub \{ \.\.\. \};\n//;
        my ($st, $out, $err, $d) = run_block("syn-$how", $block, builder => $b);
        is $st, 0, "SYNOPSIS, started with $how: every command succeeds" or diag $err;
        my @req = glob("$d/var-tmp/nytp/GET-api_users_42-*.nytprof.out");
        is scalar(@req), 1, '... one profile for the one request';
        like $out, qr/^GET-api_users_42-\S+\.nytprof\.out$/m, '... ls shows it';
        like $out, qr/::work\b/, '... nytp top shows the application\'s sub';
    }
}
{
    my $ex = pod_blocks($pod, 'EXAMPLE: STARMAN');
    my ($builder) = $ex =~ /^(builder \{.*?^\};)/ms or die;
    $builder =~ s{/var/tmp\b}{$dir/ex/var-tmp}g;
    my @cmds = grep { !/^(?:#|use |my |builder|\s|\};)/ && /\S/ } split /\n(?!\s)/, $ex;
    ok @cmds >= 4, 'Plack::Middleware::NYTP EXAMPLE: STARMAN: its commands (' . scalar(@cmds) . ')';
    my ($st, $out, $err, $d) = run_block('ex', join("\n", @cmds) . "\n", builder => $builder);
    is $st, 0, 'EXAMPLE: STARMAN: every command succeeds' or diag "$err\n" . slurp_file("$d/example.sh");
    my @req = glob("$d/var-tmp/nytp/GET-api_users_42-*");
    is scalar(@req), 1, '... the request with the header and token is profiled';
    like $out, qr/::work\b/, '... nytp top shows the application\'s sub';
    ok -f "$d/var-tmp/nytp-report/index.html", '... and nytp html wrote its report';
}

# Devel::NYTP's POD, ROTATION: starman rotating, stopped, reported
{
    my ($block) = grep { /starman/ } split /\n\n/, pod_blocks("$repo/profiler/NYTP.pm", 'ROTATION');
    ok $block, 'Devel::NYTP ROTATION: the example';
    (my $b = $block // '') =~ s/rotate=60\b/rotate=0.5/;
    my ($st, $out, $err, $d) = run_block('rotation', "$b\n");
    is $st, 0, 'ROTATION: starman rotating, stopped, reported: every command succeeds'
        or diag $err;
    my @files = glob("$d/st.out.*");
    ok @files >= 3, '... a profile per process (' . scalar(@files) . ')';
    my @cut = grep { !complete($_) } @files;
    is scalar(@cut), 0, '... each complete when nytp top reads them' or diag "cut: @cut\n$err";
    like $out, qr/^Subs by exclusive time/m, '... nytp top reports them';
}

done_testing;
