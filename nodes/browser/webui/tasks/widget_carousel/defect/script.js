const slides = [['_images/slide1.svg', 'Sunset pier, 3 km'], ['_images/slide2.svg', 'Galičica ridge, 11 km'],
                ['_images/slide3.svg', 'Spring meadows, 9 km']];
let current = 0;
function show(index) {
  current = (index + slides.length) % slides.length;
  document.getElementById('slide-img').src = slides[current][0];
  document.getElementById('slide-title').textContent = slides[current][1];
  document.querySelectorAll('.dot').forEach((dot, i) => dot.classList.toggle('on', i === current));
}
document.getElementById('next').addEventListener('click', () => show(current + 1));
document.getElementById('prev').addEventListener('click', () => show(current - 1));
