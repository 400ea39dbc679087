#!/usr/bin/perl
# Plack::Middleware::NYTP (issue 22): one request in N, or those carrying
# a header (with a token), each profiled into a file of its own named
# after the request (method, safe path, time, process, count), through
# the profiler's run-time control; every file a complete profile that
# nytp and Devel::NYTProf::Data read, holding that request's calls and
# no other's.  Under Plack::Test in one process, then in Debian's starman
# under load.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;
use JSON::PP ();

need(eval { require Plack::Test; require HTTP::Request::Common; 1 }, 'Plack (Debian package libplack-perl)');
delete $ENV{NYTPROF};

my $nytp = nytp();
my $inc = repo() . '/build/perl';
my $dir = scratch_dir();
ok -f "$inc/Plack/Middleware/NYTP.pm", 'make built the middleware into build/perl';

# the calls of each sub (short names of main:: and the .psgi's package)
# and whether the profile reads with --strict
sub read_profile {
    my ($file) = @_;
    my ($st, $out, $err) = run_cmd([$nytp, 'top', '--strict', '--json', '-n', '0', $file]);
    my $top = eval { JSON::PP->new->decode($out) } || { subs => [] };
    my %calls;
    for my $s (@{ $top->{subs} }) {
        $calls{$1} += $s->{calls} if $s->{name} =~ /(?:\A|::)(?:main|Plack::Sandbox::\w+)::(\w+)\z/;
    }
    return ($st == 0, \%calls, $err);
}

sub data_reads {
    my ($file) = @_;
    my ($st, $out, $err) = run_cmd([$^X, '-MDevel::NYTProf::Data', '-e',
        'my $p = Devel::NYTProf::Data->new({ filename => shift, quiet => 1 }); print scalar keys %{ $p->subname_subinfo_map }',
        $file]);
    return $st == 0 && $out > 0 && $err eq '';
}

sub script {
    my ($name, $code) = @_;
    open my $fh, '>', "$dir/$name" or die;
    print $fh $code;
    close $fh;
    return "$dir/$name";
}

# 1. Plack::Test, in one process under the profiler (start=no)
my $out = "$dir/req";
mkdir $out;
my $prog = script('plack-test.pl', <<"PERL");
use strict;
use warnings;
use Plack::Builder;
use Plack::Test;
use HTTP::Request::Common;
sub hot { my \$s = 0; \$s += \$_ for 1 .. 2000; \$s }
sub stream_part { return "part\\n" }
my \$app = builder {
    enable 'NYTP', every => 3, header => 'X-NYTP-Profile', token => 'sesame', dir => '$out';
    sub {
        my \$env = shift;
        die "boom\\n" if \$env->{PATH_INFO} eq '/die';
        if (\$env->{PATH_INFO} eq '/stream') {
            return sub {
                my \$w = shift->([200, ['Content-Type' => 'text/plain']]);
                \$w->write(stream_part()) for 1 .. 3;
                \$w->close;
            };
        }
        hot();
        return [200, ['Content-Type' => 'text/plain'], ["ok \$env->{'nytp.profile'}"]];
    };
};
test_psgi \$app, sub {
    my \$cb = shift;
    # every 3rd: requests 1, 4, 7 (counting from 0: 0, 3, 6)
    \$cb->(GET "/plain/\$_") for 1 .. 7;
    \$cb->(GET '/secret', 'X-NYTP-Profile' => 'wrong');    # 8th: not profiled
    \$cb->(GET '/secret', 'X-NYTP-Profile' => 'sesame');   # 9th: the header
    print \$cb->(POST '/stream', 'X-NYTP-Profile' => 'sesame')->content;
    print 'die: ', \$cb->(GET '/die', 'X-NYTP-Profile' => 'sesame')->code, "\\n";
    \$cb->(GET '/a b/<script>/../..%2Fetc/passwd;rm -rf', 'X-NYTP-Profile' => 'sesame');
};
PERL
{
    local $ENV{NYTPROF} = 'start=no';
    my ($st, $stdout, $err) = run_cmd([$^X, "-I$inc", '-d:NYTP', $prog]);
    is $st, 0, 'Plack::Test under the profiler: exit 0' or diag $err;
    like $stdout, qr/^part\npart\npart\n/m, 'a streamed response is served whole';
    like $stdout, qr/^die: 500$/m, 'an application that dies: the error goes on (500)';
}
opendir my $dh, $out or die;
my @files = sort grep { !/^\./ } readdir $dh;
closedir $dh;
is scalar @files, 7, '7 requests profiled (3 of every => 3, 4 with the header and its token)'
    or diag join "\n", @files;
for my $f (@files) {
    like $f, qr/\A[A-Z]+-[A-Za-z0-9_][A-Za-z0-9._-]*-\d{8}T\d{6}\.\d{6}Z-\d+-\d+\.nytprof\.out\z/,
        "safe name: $f";
}
my @plain = grep { /^GET-plain_/ } @files;
is_deeply [map { /^GET-plain_(\d+)-/ ? $1 : () } @plain], [1, 4, 7], 'every => 3: requests 1, 4 and 7';
ok +(grep { /^GET-secret-/ } @files) == 1, 'the header with the wrong token: not profiled; with it: profiled';
ok +(grep { /^POST-stream-/ } @files), 'the streamed response is profiled (POST, /stream)';
ok +(grep { /^GET-die-/ } @files), 'the request that died is profiled';
my ($odd) = grep { /^GET-a_b_/ } @files;
ok $odd && $odd !~ m{[/<> ;%]} && $odd =~ /^GET-a_b_script_.._.._etc_passwd_rm_-rf-/,
    "a path with spaces, <script>, .. and %2F is made safe ($odd)";
for my $f (@files) {
    my ($ok, $calls, $err) = read_profile("$out/$f");
    ok $ok, "$f: a complete profile (nytp top --strict)" or diag $err;
    ok data_reads("$out/$f"), "$f: Devel::NYTProf::Data reads it without a word";
    if ($f =~ /^GET-(?:plain|secret|a_b)/) {
        is $calls->{hot} // 0, 1, "$f: its request's one call of hot, none of another request's";
    } elsif ($f =~ /^POST-stream/) {
        is $calls->{stream_part} // 0, 3, "$f: the streamed parts (3 calls of stream_part)";
    }
}

# 1b. Requests in flight together, as an event-loop server runs them: the
# application answers later (a delayed response, a streamed one) from
# callbacks that a loop (here a queue run by hand) calls in turn, those
# of A and of B interleaved.  No profile may hold both requests' work.
my $ovl = "$dir/overlap";
mkdir $ovl;
$prog = script('overlap.pl', <<"PERL");
use strict;
use warnings;
use Plack::Builder;
my \@loop;    # the event loop: callbacks to run, in turn
sub a_start { 1 } sub a_work { 1 } sub a_part { "a\\n" }
sub b_start { 1 } sub b_work { 1 } sub b_part { "b\\n" }
sub c_start { 1 } sub d_start { 1 } sub e_start { 1 }
my \$app = builder {
    enable 'NYTP', header => 'X-NYTP-Profile', dir => '$ovl';
    sub {
        my \$env = shift;
        my (\$r) = \$env->{PATH_INFO} =~ m{/(\\w)};
        no strict 'refs';
        &{"\${r}_start"}();
        return [200, [], ["\$r done"]] if \$r eq 'c' || \$r eq 'e';
        return sub { } if \$r eq 'd';    # never answers
        if (\$env->{PATH_INFO} =~ /delayed/) {
            return sub {
                my \$respond = shift;
                push \@loop, sub { &{"\${r}_work"}(); \$respond->([200, [], ["\$r delayed"]]) };
            };
        }
        return sub {
            my \$w = shift->([200, []]);
            my \$n = 0;
            my \$step;
            \$step = sub {    # one part a turn, then the next turn queued
                return \$w->close, undef \$step if \$n++ == 3;
                \$w->write(&{"\${r}_part"}());
                &{"\${r}_work"}();
                push \@loop, \$step;
            };
            push \@loop, \$step;
        };
    };
};
my \@got;
my \$nest = 0;
sub request {
    my (\$path, \$header) = \@_;
    my \$env = { REQUEST_METHOD => 'GET', PATH_INFO => \$path, SCRIPT_NAME => '',
        'psgi.nonblocking' => 1, 'psgi.streaming' => 1 };
    \$env->{HTTP_X_NYTP_PROFILE} = 1 if \$header // 1;
    my \$res = \$app->(\$env);
    my \$respond = sub {
        my \$r = shift;
        return push \@got, \@{ \$r->[2] } if \$r->[2];
        # (the first write of the stream round serves a request, one not
        # to be profiled, inside it, as a server running its loop there)
        return Plack::Util::inline_object(write => sub { push \@got, \@_; request('/e/nested', 0) if \$nest-- == 1 },
            close => sub { push \@got, 'closed' });
    };
    ref \$res eq 'CODE' ? \$res->(\$respond) : \$respond->(\$res);
}
for my \$round ('delayed', 'stream') {
    \$nest = 1 if \$round eq 'stream';
    request("/a/\$round");
    request("/b/\$round");
    request('/c/while');    # a whole response while A and B wait
    (shift \@loop)->() while \@loop;
}
request('/c/after');
request('/d/dropped');
request('/c/after');
print join(',', map { s/\\n//r } \@got), "\\n";
PERL
{
    local $ENV{NYTPROF} = 'start=no';
    my ($st, $stdout, $err) = run_cmd([$^X, "-I$inc", '-d:NYTP', $prog]);
    is $st, 0, 'requests in flight together: exit 0' or diag $err;
    is $stdout, "c done,a delayed,b delayed,c done,a,e done,b,a,b,a,b,closed,closed,c done,c done\n",
        '... every response served whole';
    opendir my $od, $ovl or die;
    my @of = sort grep { !/^\./ } readdir $od;
    closedir $od;
    my %who;    # request => the profiles with its subs in them
    for my $f (@of) {
        my ($ok, $calls, $err2) = read_profile("$ovl/$f");
        ok $ok, "$f: a complete profile" or diag $err2;
        my @in = sort grep { my $r = $_; grep { $calls->{"${r}_$_"} } qw(start work part) } qw(a b c d e);
        is scalar @in, 1, "$f: the work of one request only (" . join(' ', @in) . ')';
        push @{ $who{$_} }, $f for @in;
    }
    for my $round ('delayed', 'stream') {
        my ($a) = grep { /^GET-a_$round-/ } @of;
        ok $a, "$round: the first request in flight (A) has a profile";
        next unless $a;
        my ($ok, $calls) = read_profile("$ovl/$a");
        is $calls->{a_start} // 0, 1, "$round: A's profile has its start (in the application call)";
    }
    ok !(grep { /^GET-(?:b|c_while|e)/ } @of), 'requests that came while A was in flight: served unprofiled';
    is scalar(grep { /^GET-c_after-/ } @of), 2,
        'once A is complete, or its responder dropped unused, the next request is profiled';
    ok +(grep { /^GET-d_dropped-/ } @of), '... the dropped one has its profile (read above)';
}

# 2. What it refuses, and where it stands aside
{
    my $p = script('opts.pl', <<'PERL');
use Plack::Builder;
for my $o ([], [header => 'Bad Header'], [every => -1], [every => 'x']) {
    my $app = eval { builder { enable 'NYTP', @$o; sub { [200, [], ['x']] } } };
    print $@ ? "refused: $@" : "accepted\n";
}
PERL
    my ($st, $stdout) = run_cmd([$^X, "-I$inc", $p]);
    my @r = split /\n/, $stdout;
    is scalar(grep { /^refused: Plack::Middleware::NYTP: / } @r), 4,
        'no every nor header, a bad header name, a negative or non-numeric every: refused with a message';
    $p = script('aside.pl', <<"PERL");
use Plack::Builder; use Plack::Test; use HTTP::Request::Common;
my \$app = builder { enable 'NYTP', every => 1, dir => '$dir/aside'; sub { [200, [], ['served']] } };
test_psgi \$app, sub { print shift->(GET '/x')->content, "\\n" };
PERL
    mkdir "$dir/aside";
    ($st, $stdout, my $err) = run_cmd([$^X, "-I$inc", $p]);
    is $stdout, "served\n", 'without the profiler: requests are served';
    like $err, qr/the profiler is not loaded/, '... and it says once why none is profiled';
    local $ENV{NYTPROF} = "file=$dir/whole.out";
    ($st, $stdout, $err) = run_cmd([$^X, "-I$inc", '-d:NYTP', $p]);
    is $stdout, "served\n", 'the whole process profiled (no start=no): requests are served';
    like $err, qr/the whole process is being profiled/, '... the middleware stands aside and says so';
    my ($ok) = read_profile("$dir/whole.out");
    ok $ok, '... and the whole profile is left complete';
    opendir my $ad, "$dir/aside" or die;
    is scalar(grep { !/^\./ } readdir $ad), 0, '... no file per request';
}

# 3. Starman, two workers, under nytp run with start=no
SKIP: {
    skip 'starman or wrk missing', 1
        if missing(-x '/usr/bin/starman' && grep({ -x "$_/wrk" } split /:/, $ENV{PATH}),
            'starman and wrk (Debian packages starman, wrk)');
    require NytpServer;
    NytpServer->import;
    my $sdir = "$dir/server";
    mkdir $sdir;
    mkdir "$sdir/req";
    local $ENV{NYTP_MW_DIR} = "$sdir/req";
    local $ENV{NYTP_MW_EVERY} = 500;
    local $ENV{NYTP_SERVICE_WORK} = 100;
    my $srv = start_server(dir => $sdir, app => repo() . '/tests/programs/service-mw.psgi', workers => 2,
        nytprof => 'start=no:savesrc=0', perl_inc => [$inc]);
    my $wrk = load_server($srv, secs => 1, threads => 1, conns => 2, background => 1);
    my @asked;
    for my $i (1 .. 4) {
        my $r = NytpServer::get($srv->{port}, "/api/item/$i?x=<y>", 'X-NYTP-Profile: sesame') // '';
        push @asked, $i if $r =~ m{^HTTP/1\.\d 200};
    }
    waitpid $wrk->{pid}, 0;
    my (undef, $n) = NytpServer::wrk_result($wrk->{out});
    my ($st, $err) = stop_server($srv, 'nytp');
    is $st, 0, 'starman with the middleware: stopped with TERM, exit 0' or diag $err;
    opendir my $sd, "$sdir/req" or die;
    my @got = sort grep { !/^\./ } readdir $sd;
    my @hdr = grep { /^GET-api_item_\d-/ } @got;
    is scalar @hdr, scalar @asked, 'a profile for each request with the header (' . scalar(@hdr) . ')';
    my @every = grep { /^GET-root-/ } @got;
    # each worker profiles its requests 1, 501, 1001, ...: at least one
    # each when it served any, at most its count / 500 + 1
    ok @every >= 1 && @every <= int($n / 500) + 4,
        scalar(@every) . " of $n requests under load profiled (every => 500 per worker)";
    my $bad = 0;
    for my $f (@hdr, @every) {
        my ($ok, $calls, $e) = read_profile("$sdir/req/$f");
        $bad++, diag "$f: $e" unless $ok && ($calls->{hot_loop} // 0) == 1 && ($calls->{handle} // 0) == 1;
    }
    is $bad, 0, 'each is complete, with its request\'s calls only (one handle, one hot_loop)';
    ok data_reads("$sdir/req/$hdr[0]"), 'Devel::NYTProf::Data reads one without a word' if @hdr;
}

# A missing or unwritable dir is found once, at start, not warned at
# every request chosen (issue 35, item 18: 216 lines in 5 s); one that
# goes away later is said once per process, which then stops trying.
for my $case ('missing', 'a file', 'removed later') {
    my $d = "$dir/gone-" . ($case =~ tr/ /_/r);
    if ($case eq 'a file') { open my $fh, '>', $d or die; close $fh }
    if ($case eq 'removed later') { mkdir $d or die }
    my $p = script('gone.pl', <<"PERL");
use Plack::Builder;
use Plack::Test;
use HTTP::Request::Common;
my \$app = builder { enable 'NYTP', every => 1, dir => '$d'; sub { [200, [], ['ok']] } };
rmdir '$d' if '$case' eq 'removed later';
test_psgi \$app, sub { my \$cb = shift; print \$cb->(GET "/r/\$_")->code, "\\n" for 1 .. 20 };
PERL
    local $ENV{NYTPROF} = 'start=no';
    my ($st, $stdout, $err) = run_cmd([$^X, "-I$inc", '-d:NYTP', $p]);
    is $stdout, "200\n" x 20, "dir $case: the 20 requests are served";
    my @said = $err =~ /^(Plack::Middleware::NYTP: (?:dir|cannot profile)[^\n]*)$/mg;
    is scalar(@said), 1, "dir $case: said once, not per request" or diag $err;
    like $said[0] // '', $case eq 'removed later' ? qr/cannot profile into \Q$d\E\// : qr/dir '\Q$d\E' is \Q@{[$case eq 'missing' ? 'missing' : 'not a directory']}\E: no request is profiled/,
        "dir $case: what is wrong";
}

done_testing;
