# Long real workload for `bench/run big`: Perl::Tidy reformats every Perl
# module and script installed under the given directories, one after the
# other, in one process.  With a profile file and a size in bytes (the
# environment variables TIDY_MANY_PROFILE and TIDY_MANY_STOP), it stops
# after the file that made the profile reach that size; when every file has
# been done, it starts again with other formatting options (a different
# indentation and line length make perltidy take other paths), so the
# workload is never the same bytes twice in a row.
use strict;
use warnings;
use File::Find ();
use Perl::Tidy ();

my @dirs = @ARGV ? @ARGV : ('/usr/share/perl5', '/usr/share/perl');
my @files;
File::Find::find(
    { no_chdir => 1,
      wanted   => sub { push @files, $_ if -f $_ && /\.p[ml]\z/ } },
    grep { -d } @dirs);
@files = sort @files;
die "tidy_many.pl: no Perl files under @dirs\n" unless @files;

my $profile = $ENV{TIDY_MANY_PROFILE};
my $stop    = $ENV{TIDY_MANY_STOP} || 0;
my @options = ('-npro', '-npro -i=2 -l=100', '-npro -i=8 -l=60 -ce', '-npro -gnu');
my ($done, $bytes) = (0, 0);
PASS: for my $pass (0 .. 99) {
    my $argv = $options[$pass % @options];
    for my $file (@files) {
        my ($out, $err) = ('', '');
        # Errors in odd files are perltidy's business; keep going.
        eval {
            Perl::Tidy::perltidy(source => $file, destination => \$out,
                                 stderr => \$err, errorfile => \$err,
                                 logfile => \$err, argv => $argv);
            1;
        };
        $done++;
        $bytes += -s $file;
        last PASS if $stop && $profile && (-s $profile || 0) >= $stop;
    }
    last unless $stop;
}
printf "tidied %d files, %d bytes of source\n", $done, $bytes;
