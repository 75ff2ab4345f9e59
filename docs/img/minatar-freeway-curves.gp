set terminal pngcairo size 800,500 noenhanced
set termoption font 'Sans,10'
set output 'docs/img/minatar-freeway-curves.png'
set title 'Freeway: mean training return per 50k frames'
set xlabel 'frames (millions; a point at the middle of each window)'
set ylabel 'mean return of training episodes'
set grid
set key top left Left reverse opaque box
set xrange [0:2]
set yrange [0:56.922]
plot 'docs/img/minatar-freeway-curves.dat' index 0 using (($1+$2)/2e6):4:5 with filledcurves fc rgb '#1f77b4' fs transparent solid 0.2 notitle, \
     'docs/img/minatar-freeway-curves.dat' index 0 using (($1+$2)/2e6):3 with linespoints lw 2 pt 7 ps 0.5 lc rgb '#1f77b4' title 'gorila, 5 runs (seeds 101-105)', \
     'docs/img/minatar-freeway-curves.dat' index 1 using (($1+$2)/2e6):4:5 with filledcurves fc rgb '#ff7f0e' fs transparent solid 0.2 notitle, \
     'docs/img/minatar-freeway-curves.dat' index 1 using (($1+$2)/2e6):3 with linespoints lw 2 pt 7 ps 0.5 lc rgb '#ff7f0e' title 'dqn.py, 3 runs'
