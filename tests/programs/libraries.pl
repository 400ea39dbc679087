# Real library code: JSON::PP encoding and decoding, Pod::Text rendering
# this file's own POD, Data::Dumper with Storable, Encode.
use JSON::PP;
use Pod::Text;
use Data::Dumper;
use Storable qw(dclone);
use Encode qw(encode decode);
my $j = JSON::PP->new->canonical->pretty;
my $d = { map { ("k$_" => [1 .. $_ % 20, { x => "y$_" }]) } 1 .. 100 };
my $s = $j->encode($d);
my $back = $j->decode($s);
my $pod;
my $p = Pod::Text->new;
$p->output_string(\$pod);
$p->parse_file($0);
$Data::Dumper::Sortkeys = 1;
my $dump = Dumper(dclone($back));
my $t = 0;
$t += length decode('UTF-8', encode('UTF-8', "h\x{e9}llo \x{263a} " x 50)) for 1 .. 20;
print length($s), " ", length($pod), " ", length($dump), " $t\n";
__END__

=head1 NAME

libraries.pl - a workload for the profiler tests

=head1 DESCRIPTION

Some I<text> with B<markup>, C<code> and a list:

=over

=item * one

=item * two

=back

=cut
