# A PSGI application for the server tests (tests/44-server.t,
# tests/45-middleware.t, bench/run service): a hot sub that takes most of
# the time of a request, a few others, and an END block that takes a
# moment, as one that closes connections does (a second TERM sent to a
# worker lands in it).
use strict;
use warnings;
use Time::HiRes ();

sub hot_loop {
    my $n = shift;
    my $s = 0;
    $s += $_ * $_ for 1 .. $n;
    return $s;
}

sub render { return "sum=$_[0]\n" }

sub handle {
    my $env = shift;
    my $v = hot_loop($ENV{NYTP_SERVICE_WORK} // 3000);
    return [200, ['Content-Type' => 'text/plain'], [render($v)]];
}

sub closing { my $until = Time::HiRes::time() + 0.3; 1 while Time::HiRes::time() < $until }
END { closing() if $ENV{NYTP_SERVICE_SLOW_END} }

\&handle;
